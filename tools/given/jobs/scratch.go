package jobs

import "sync"

// Scratch holds the buffers of SORT and MATMUL so that a worker can run job
// after job without allocating: each buffer grows to the largest n seen and is
// reused. Give each worker goroutine its own Scratch; it is not safe for
// concurrent use. The zero value is ready to use.
//
// Only memory is reused, never results: every call reseeds the generator,
// refills the inputs and does the whole computation, as the original does.
//
// A Scratch keeps what it grew to: up to 16 MB after SORT 2000000 (two int32
// buffers) and 6 MB after MATMUL 512 (three float64 matrices).
type Scratch struct {
	rng       MT19937
	keys, tmp []int32   // SORT input and radix sort buffer
	a, b, c   []float64 // MATMUL operands and product
}

// Sort runs SORT n (1 ≤ n ≤ MaxSort): it fills n int32s with the first n
// outputs of MT19937 seeded with [SortSeed], sorts them ascending and returns
// the checksum, first XOR last. Format it with [AppendSortResult].
func (s *Scratch) Sort(n int) int32 {
	checkRange("SORT", n, MaxSort)
	keys := resize(&s.keys, n)
	s.rng.Seed(SortSeed)
	s.rng.fillInt32(keys)
	sorted := sortInt32(keys, resize(&s.tmp, n))
	return sorted[0] ^ sorted[n-1]
}

// MatMul runs MATMUL n (1 ≤ n ≤ MaxMatMul): it multiplies the n×n matrices A
// (every element 1.5) and B (every element 2.0) and returns the checksum
// C[n*n/2]. Format it with [AppendMatMulResult].
func (s *Scratch) MatMul(n int) float64 {
	checkRange("MATMUL", n, MaxMatMul)
	a := fill(resize(&s.a, n*n), 1.5)
	b := fill(resize(&s.b, n*n), 2.0)
	c := fill(resize(&s.c, n*n), 0)
	matMul(c, a, b, n)
	return c[n*n/2]
}

// resize returns (*buf)[:n], allocating a new buffer only if the old one is too
// small. The contents are unspecified: callers overwrite them.
func resize[T any](buf *[]T, n int) []T {
	if cap(*buf) < n {
		*buf = make([]T, n)
	}
	return (*buf)[:n]
}

func fill(s []float64, v float64) []float64 {
	for i := range s {
		s[i] = v
	}
	return s
}

// scratchPool backs the package-level Sort and MatMul. sync.Pool reuses a
// Scratch between calls without allocating, but may drop it at any garbage
// collection; a worker that owns a Scratch never pays for a regrowth.
var scratchPool = sync.Pool{New: func() any { return new(Scratch) }}

// Sort is [Scratch.Sort] with a pooled Scratch, for callers without a worker of
// their own (tests, tools). Safe for concurrent use.
func Sort(n int) int32 {
	s := scratchPool.Get().(*Scratch)
	defer scratchPool.Put(s)
	return s.Sort(n)
}

// MatMul is [Scratch.MatMul] with a pooled Scratch, for callers without a
// worker of their own. Safe for concurrent use.
func MatMul(n int) float64 {
	s := scratchPool.Get().(*Scratch)
	defer scratchPool.Put(s)
	return s.MatMul(n)
}
