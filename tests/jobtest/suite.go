// Package jobtest is the conformance suite of chapter 03: black-box checks of
// a ThreadForge-compatible job server (docs/protocols.md §2) and of the
// bounded queue and worker pool it is built from. A chapter wires its package
// in with a few lines:
//
//	var impl = jobtest.Impl{Parse: …, NewQueue: …, NewServer: …}
//	func TestEx3_2_BoundedQueue(t *testing.T) { jobtest.BoundedQueue(t, impl) }
//
// Each exported check grades one exercise and can run alone. The checks
// depend only on the protocol and on Impl, including the hooks of Config that
// let a check hold workers and count the lines a server has read: that is how
// concurrency, back-pressure and shutdown order are checked structurally,
// without timing.
package jobtest

import (
	"io"
	"log/slog"
	"time"

	"serverlab/tools/given/lab"
)

// Impl is what a chapter hands to the suite.
type Impl struct {
	// Parse validates one request line, without its line ending (exercise
	// 3.1). Its errors' texts are the protocol's messages.
	Parse func(line []byte) (Request, error)
	// NewLineReader returns the next-line function of a line reader on r
	// (exercise 3.1).
	NewLineReader func(r io.Reader) (next func() ([]byte, error))
	// NewQueue returns an empty bounded queue of ints (exercise 3.2).
	NewQueue func(capacity int) Queue
	// NewBytesQueue returns an empty bounded queue of byte slices, the same
	// type as NewQueue's: the suite checks with it that what Get hands out
	// is not kept alive by the queue.
	NewBytesQueue func(capacity int) BytesQueue
	// StartPool makes a queue of the given capacity and starts a pool of
	// workers on it that call work for each item (exercise 3.3). wait waits
	// for the workers to return.
	StartPool func(workers, capacity int, work func(worker, item int)) (q Queue, wait func())
	// NewServer builds a job server (exercises 3.4–3.7).
	NewServer func(Config) (lab.Server, error)
	// Stats returns the counts of a server NewServer built (exercise 3.7).
	Stats func(lab.Server) Stats
}

// Request is a parsed request: Command is spelled as on the wire ("PRIME"),
// N is the argument of PRIME, SORT and MATMUL, Text the argument of HASH.
type Request struct {
	Command string
	N       uint64
	Text    string
}

// Queue is a bounded queue of ints (exercise 3.2).
type Queue interface {
	Put(item int) error
	Get() (item int, ok bool)
	Close()
}

// BytesQueue is a bounded queue of byte slices (exercise 3.2).
type BytesQueue interface {
	Put(item []byte) error
	Get() (item []byte, ok bool)
	Close()
}

// Config is what the suite sets when it builds a server.
type Config struct {
	Workers  int
	QueueCap int
	// WriteTimeout bounds each write to a client; 0 means the server's
	// default.
	WriteTimeout time.Duration
	// MaxPending is how many bytes of answers may wait for a client before
	// its reader stops reading; 0 means the server's default.
	MaxPending int
	// Logger is the server's logger; nil means testkit.Logger().
	Logger *slog.Logger
	// OnLineRead must be called by a connection's reader each time it has
	// read a line (valid or not, too large included), before the line takes
	// its job id.
	OnLineRead func()
	// OnJobStart must be called by a worker just before it computes job id;
	// the worker waits while it runs.
	OnJobStart func(id uint64)
	// OnFastWrite is called by the given fast path of send (trywrite) with
	// the bytes the socket took, before send returns; an open-track server
	// may never call it.
	OnFastWrite func(p []byte)
}

// Stats are a server's counts: every line is Submitted when it takes its job
// id and becomes Completed (answered OK) or Failed (answered ERROR), counted
// before its answer is written.
type Stats struct {
	Submitted, Completed, Failed uint64
}
