// Package jobs is the given code of chapter 03: the four computations a
// ThreadForge job server runs (docs/protocols.md §2) and the exact result
// strings the protocol answers with.
//
//	PRIME <n>    Prime(n)                  → "prime" | "composite"
//	SORT <n>     (*Scratch).Sort(n)        → "sorted <n> checksum <c>"
//	MATMUL <n>   (*Scratch).MatMul(n)      → "matmul <n> checksum <%f>"
//	HASH <text>  Hash(text)                → unsigned decimal
//
// Students write the queue, the worker pool and the server; they call these
// functions and never re-implement them. The course's suites and load tools
// import the same functions, so there is one definition of every answer.
//
// # Performance
//
// The chapter's goal is to beat the C++ original (g++ -O2) with two workers, so
// the heavy jobs are written for steady-state zero allocation: each worker owns
// a [Scratch] whose buffers are reused from job to job. (A Go server that
// allocated fresh buffers per job reached 0.8× of the original on SORT and 0.5×
// on MATMUL — docs/originals.md.) Every call still does the whole
// computation: the generator is reseeded, the matrices are refilled and
// multiplied, nothing is cached between calls.
package jobs

import "strconv"

// Protocol limits of the job server (docs/protocols.md §2). The request parser and
// the test suites use these constants; the computations panic outside them.
const (
	// MaxLine is the longest request line in bytes, not counting the '\n'.
	MaxLine = 4096
	// MaxSort is the largest n of SORT n (the smallest is 1).
	MaxSort = 2_000_000
	// MaxMatMul is the largest n of MATMUL n (the smallest is 1).
	MaxMatMul = 512
)

// SortSeed is the MT19937 seed that SORT uses; the original hard-codes 42.
const SortSeed = 42

// checkRange panics unless 1 ≤ n ≤ max. A request that reaches a computation
// has passed the parser, so an out-of-range n is a bug in the caller.
func checkRange(job string, n, max int) {
	if n < 1 || n > max {
		panicRange(job, n, max)
	}
}

// panicRange is separate so that checkRange stays small enough to inline.
func panicRange(job string, n, max int) {
	panic("jobs: " + job + " n=" + strconv.Itoa(n) + " out of range [1, " + strconv.Itoa(max) + "]")
}
