package jobs

import (
	"slices"
	"strconv"
	"testing"
)

// Per-job costs in the steady state of a worker (buffers already grown).
// Compare with the C++ original in the same run, interleaved; quote medians of
// -count 5 or more:
//
//	go test -run '^$' -bench . -benchmem -count 5 ./tools/given/jobs/

var (
	sinkBool  bool
	sinkInt32 int32
	sinkF64   float64
	sinkU64   uint64
)

// BenchmarkPrime runs PRIME 32416190071, the load test's default: a prime, so
// all ~90 000 odd divisors up to its square root are tried.
func BenchmarkPrime(b *testing.B) {
	for b.Loop() {
		sinkBool = Prime(32416190071)
	}
}

// BenchmarkPrimeDivision is the evidence for Prime's floating-point
// divisibility test: the same trial division of 32416190071 with each test.
func BenchmarkPrimeDivision(b *testing.B) {
	const n = 32416190071
	limit := isqrt(n)
	b.Run("float", func(b *testing.B) {
		for b.Loop() {
			sinkBool = noOddDivisorFloat(n, limit)
		}
	})
	b.Run("integer", func(b *testing.B) {
		for b.Loop() {
			sinkBool = noOddDivisor(n, limit)
		}
	})
}

func BenchmarkSort10000(b *testing.B) {
	var s Scratch
	s.Sort(10000) // warm-up: grow the buffers before measuring
	b.ReportAllocs()
	for b.Loop() {
		sinkInt32 = s.Sort(10000)
	}
}

func BenchmarkSort2000000(b *testing.B) {
	var s Scratch
	s.Sort(MaxSort) // warm-up: grow the buffers before measuring
	b.ReportAllocs()
	for b.Loop() {
		sinkInt32 = s.Sort(MaxSort)
	}
}

func BenchmarkMatMul32(b *testing.B) {
	var s Scratch
	s.MatMul(32) // warm-up: grow the buffers before measuring
	b.ReportAllocs()
	for b.Loop() {
		sinkF64 = s.MatMul(32)
	}
}

func BenchmarkMatMul512(b *testing.B) {
	var s Scratch
	s.MatMul(MaxMatMul) // warm-up: grow the buffers before measuring
	b.ReportAllocs()
	for b.Loop() {
		sinkF64 = s.MatMul(MaxMatMul)
	}
}

// BenchmarkMatMulKernels is the evidence for matMul's loop order and
// unrolling: MATMUL 32's product (filling excluded) with the textbook i-j-k
// loop (a column of b per element, one long chain of additions), the plain
// i-k-j loop (rows of b and c, stride 1) and matMul (i-k-j, four rows of b per
// pass over c, no bounds checks in the inner loop). Compare with the C++
// original's i-k-j loop under g++ -O3 in the same run (docs/bench-ch03.md).
func BenchmarkMatMulKernels(b *testing.B) {
	const n = 32
	x, y, z := make([]float64, n*n), make([]float64, n*n), make([]float64, n*n)
	fill(x, 1.5)
	fill(y, 2.0)
	kernels := []struct {
		name string
		mul  func(c, a, b []float64, n int)
	}{
		{"ijk", matMulIJK},
		{"ikj", matMulIKJ},
		{"matMul", matMul},
	}
	for _, k := range kernels {
		b.Run(k.name, func(b *testing.B) {
			for b.Loop() {
				fill(z, 0)
				k.mul(z, x, y, n)
			}
			sinkF64 = z[n*n/2]
		})
	}
}

// matMulIJK is the textbook loop: c[i][j] = Σ_k a[i][k]·b[k][j].
func matMulIJK(c, a, b []float64, n int) {
	for i := range n {
		for j := range n {
			var s float64
			for k := range n {
				s += a[i*n+k] * b[k*n+j]
			}
			c[i*n+j] = s
		}
	}
}

// matMulIKJ is the original's loop order, written plainly.
func matMulIKJ(c, a, b []float64, n int) {
	for i := range n {
		for k := range n {
			for j := range n {
				c[i*n+j] += a[i*n+k] * b[k*n+j]
			}
		}
	}
}

// BenchmarkHash hashes a 64-byte argument, a typical request line's.
func BenchmarkHash(b *testing.B) {
	text := []byte("the quick brown fox jumps over the lazy dog, twice: once, again.")
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		sinkU64 = HashBytes(text)
	}
}

// BenchmarkSortAlgorithms is the evidence for sortInt32's radix sort: it sorts
// the same MT19937 outputs with the radix sort and with slices.Sort (pdqsort),
// copying the unsorted input in each iteration for both.
func BenchmarkSortAlgorithms(b *testing.B) {
	for _, n := range []int{64, 128, 256, 512, 10_000, MaxSort} {
		var m MT19937
		m.Seed(SortSeed)
		input := make([]int32, n)
		m.fillInt32(input)
		keys, tmp := make([]int32, n), make([]int32, n)
		b.Run("radix/"+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				copy(keys, input)
				sinkInt32 = radixSort(keys, tmp)[0]
			}
		})
		b.Run("pdqsort/"+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				copy(keys, input)
				slices.Sort(keys)
				sinkInt32 = keys[0]
			}
		})
	}
}
