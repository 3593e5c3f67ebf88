// Package stock is the chapter 04 server: a pre-threaded stock server that
// speaks the stock protocol (docs/protocols.md §3).
//
// A master goroutine accepts connections; each waits for its client's next
// request in the waiting room (a goroutine blocked in a read, holding no
// worker), and a fixed pool of workers runs the requests of the clients that
// have sent one, at most one client per worker at a time. The
// stocks live in a binary search tree shared by every worker: a
// writer-preferring reader-writer lock orders `show` against `buy`/`sell`,
// and a mutex per stock makes "is there enough left?" and the decrement one
// step. The tree is written back to stock.txt when the last client leaves and
// at a fixed interval while clients are connected.
package stock
