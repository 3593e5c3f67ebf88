package jobs

import (
	"math/rand/v2"
	"testing"
)

func TestScratchMatMulVectors(t *testing.T) {
	// C = A×B with A all 1.5 and B all 2.0 has every element 3n; the
	// checksum is C[n*n/2]. One Scratch, growing and shrinking.
	tests := []struct {
		n    int
		want float64
	}{
		{3, 9},
		{1, 3},
		{64, 192},
		{MaxMatMul, 1536},
		{2, 6},
		{32, 96},
	}
	var s Scratch
	for _, tt := range tests {
		if raceEnabled && tt.n == MaxMatMul {
			continue // ~0.7 s under -race; TestProtocolVectors runs it in every mode
		}
		if got := s.MatMul(tt.n); got != tt.want {
			t.Errorf("MATMUL %d: checksum %v, want %v", tt.n, got, tt.want)
		}
	}
}

// TestMatMulKernel checks the i-k-j kernel against the textbook triple loop on
// random integer-valued matrices (so both sums are exact and must be equal),
// for sizes on both sides of the unrolled loop's multiple of four. Constant
// matrices alone would not catch a transposed index.
func TestMatMulKernel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 2, 3, 4, 5, 7, 8, 9, 17, 33} {
		a, b := make([]float64, n*n), make([]float64, n*n)
		for i := range a {
			a[i] = float64(rng.IntN(21) - 10)
			b[i] = float64(rng.IntN(21) - 10)
		}
		got := make([]float64, n*n)
		matMul(got, a, b, n)
		for i := range n {
			for j := range n {
				var want float64
				for k := range n {
					want += a[i*n+k] * b[k*n+j]
				}
				if got[i*n+j] != want {
					t.Fatalf("n=%d: C[%d][%d] = %v, want %v", n, i, j, got[i*n+j], want)
				}
			}
		}
	}
}

// TestScratchMatMulComputesEveryElement checks that the whole product is
// computed, not just the element the checksum reads.
func TestScratchMatMulComputesEveryElement(t *testing.T) {
	var s Scratch
	for _, n := range []int{5, 16} {
		s.MatMul(n)
		for i, v := range s.c[:n*n] {
			if want := 3 * float64(n); v != want {
				t.Fatalf("MATMUL %d: C[%d] = %v, want %v", n, i, v, want)
			}
		}
	}
}
