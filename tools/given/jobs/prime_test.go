package jobs

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestPrimeSmallAgainstSieve compares Prime with a sieve of Eratosthenes for
// every n below 100 000 (0 and 1 are composite, as in the original).
func TestPrimeSmallAgainstSieve(t *testing.T) {
	const limit = 100_000
	composite := make([]bool, limit)
	composite[0], composite[1] = true, true
	for i := 2; i*i < limit; i++ {
		if !composite[i] {
			for j := i * i; j < limit; j += i {
				composite[j] = true
			}
		}
	}
	for n := range uint64(limit) {
		if got, want := Prime(n), !composite[n]; got != want {
			t.Fatalf("Prime(%d) = %v, sieve says %v", n, got, want)
		}
	}
}

// TestPrimeLargeAgainstBig compares Prime with math/big's ProbablyPrime, which
// is exact below 2^64: on random numbers below 2^40 (at most 2^19 divisions
// each), and on numbers near 2^64 that have a small factor (a prime that large
// would take ~2^31 divisions, so TestIsqrt covers the bound instead).
func TestPrimeLargeAgainstBig(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var ns []uint64
	for range 300 {
		ns = append(ns, rng.Uint64N(1<<40))
	}
	for range 100 {
		n := math.MaxUint64 - rng.Uint64N(1<<20)
		if n%3 == 0 || n%5 == 0 || n%7 == 0 || n%2 == 0 {
			ns = append(ns, n)
		}
	}
	ns = append(ns,
		32416190071,         // the load test's default, prime
		32416190071*3,       // composite with a small factor
		1000003*1000033,     // product of two primes near 10^6
		4294967291,          // largest prime below 2^32
		4294967291*3,        // beyond 2^32
		math.MaxUint64,      // 3 × 5 × 17 × 257 × 641 × 65537 × 6700417
		1<<63,               // even
		9223372036854775809, // 2^63+1 = 3^3 × 19 × 43 × 5419 × 77158673929
		math.MaxUint64-2,    // 2^64-3, smallest factor 13
	)
	for _, n := range ns {
		want := new(big.Int).SetUint64(n).ProbablyPrime(0)
		if got := Prime(n); got != want {
			t.Errorf("Prime(%d) = %v, math/big says %v", n, got, want)
		}
	}
}

// TestPrimeAround2To53 runs the floating-point divisibility test where it is
// most exposed: at the top of its range (n just below 2^53) and with the
// largest divisors it ever tries (a product of two primes near 2^26.5, found
// only when i reaches ~9.5e7); and the integer path through a whole loop just
// above 2^53. Each case is ~4.7e7 divisions, tens of ms.
func TestPrimeAround2To53(t *testing.T) {
	tests := []struct {
		n    uint64
		want bool
	}{
		{9007199254740881, true},     // largest prime below 2^53
		{94906247 * 94906249, false}, // both factors prime, product < 2^53
		{94906249 * 94906249, false}, // a square
		{1<<53 + 5, true},            // smallest prime above 2^53: integer path
		{1<<53 - 1, false},           // 6361 × 69431 × 20394401
	}
	for _, tt := range tests {
		want := new(big.Int).SetUint64(tt.n).ProbablyPrime(0)
		if want != tt.want {
			t.Fatalf("test table: %d is prime = %v per math/big, table says %v", tt.n, want, tt.want)
		}
		if got := Prime(tt.n); got != want {
			t.Errorf("Prime(%d) = %v, want %v", tt.n, got, want)
		}
	}
}

// TestDivisibilityTestsAgree checks the floating-point loop against the
// integer loop (which Prime uses only from 2^53 up) on random odd n of every
// magnitude below 2^53: with their real bound below 2^36, and with the bound
// cut to 2^16 (so that large primes stay cheap) everywhere.
func TestDivisibilityTestsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for range 2000 {
		n := rng.Uint64N(1<<(8+rng.IntN(46))) | 1
		limit := isqrt(n)
		if n < 1<<36 {
			if f, i := noOddDivisorFloat(n, limit), noOddDivisor(n, limit); f != i {
				t.Errorf("n=%d: float test says %v, integer test says %v", n, f, i)
			}
		}
		limit = min(limit, 1<<16)
		if f, i := noOddDivisorFloat(n, limit), noOddDivisor(n, limit); f != i {
			t.Errorf("n=%d, limit %d: float test says %v, integer test says %v", n, limit, f, i)
		}
	}
}

// TestIsqrt checks the loop bound of Prime, which is what keeps it correct for
// n near 2^64 where i*i <= n would overflow. Trial division of a prime that
// large takes seconds, so the bound is tested directly, against math/big.
func TestIsqrt(t *testing.T) {
	ns := []uint64{0, 1, 2, 3, 4, 8, 9, 10, 15, 16, 17, 99, 100, 101,
		math.MaxUint64, math.MaxUint64 - 1, 1 << 62, 1<<62 - 1, 1 << 63,
		math.MaxUint32 * math.MaxUint32, math.MaxUint32*math.MaxUint32 - 1, math.MaxUint32*math.MaxUint32 + 1,
		1 << 52, 1<<52 + 1, 1<<53 - 1, 1 << 53, 1<<53 + 1,
	}
	// Squares and their neighbours, where float64 rounding goes wrong.
	for r := uint64(math.MaxUint32); r > math.MaxUint32-1000; r-- {
		ns = append(ns, r*r-1, r*r, r*r+1)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		ns = append(ns, rng.Uint64())
	}
	for _, n := range ns {
		want := new(big.Int).Sqrt(new(big.Int).SetUint64(n)).Uint64()
		if got := isqrt(n); got != want {
			t.Errorf("isqrt(%d) = %d, want %d", n, got, want)
		}
	}
}
