//go:build linux

// Package epolltest is the conformance suite of chapter 05's event loop: the
// checks that only an epoll server needs. (The chat and stock servers on the
// loop also run the very same suites as chapters 02 and 04, tests/chattest and
// tests/stocktest, unchanged.) A chapter wires its package in with a few
// lines:
//
//	var impl = epolltest.Impl{DrainFrames: evloop.DrainFrames, …}
//	func TestEx5_1_DrainFrames(t *testing.T) { epolltest.DrainFrames(t, impl) }
//
// Each exported check grades one exercise and can run alone. The checks
// depend only on the protocols (docs/protocols.md §1 and §3), on Impl and
// on what Linux says about the test process (its CPU time and its open fds),
// never on the loop's internals. Off Linux every check skips: the loop is
// built on epoll.
package epolltest

import (
	"time"

	"serverlab/tools/given/lab"
	"serverlab/tools/given/wire"
)

// Impl is what a chapter hands to the suite.
type Impl struct {
	// DrainFrames decodes the complete chat frames at the front of in and
	// calls fn for each, in order, until no complete frame is left or fn
	// returns false; it returns the bytes of the frames it handed over
	// (exercise 5.1).
	DrainFrames func(in []byte, fn func(wire.Frame) bool) (int, error)
	// DrainLines does the same for '\n'-terminated lines, handed over without
	// the '\n' and a trailing '\r' (exercise 5.2).
	DrainLines func(in []byte, fn func(line []byte) bool) (int, error)
	// NewEcho builds the chapter's given echo server on the loop: the loop's
	// own exercises (5.3–5.8) are checked on it, so that they need no
	// exercise of the chat or stock server (those run tests/chattest and
	// tests/stocktest).
	NewEcho func(EchoConfig) (lab.Server, error)
}

// EchoConfig is what the suite sets when it builds an echo server: it
// answers every line with "n " and Repeat copies of the line, then '\n', n
// counting the lines it answered before, from every client.
type EchoConfig struct {
	// Repeat is how many copies of a line its reply holds; 0 means 1.
	Repeat int
	// GreetTimeout is how long a new connection has to send its first line
	// before it is closed; 0 means never.
	GreetTimeout time.Duration
	Limits
}

// Limits bound a connection's unsent output; 0 means the chapter's default.
type Limits struct {
	// HighWater: at this many unsent bytes the loop stops reading from the
	// connection, until its output has been sent.
	HighWater int
	// MaxPending: at this many unsent bytes the connection is closed (its
	// client does not read what it is sent).
	MaxPending int
	// StallTimeout: a connection whose unsent output has made no progress
	// for this long is closed (its client has stopped reading).
	StallTimeout time.Duration
}

// MaxLine is the longest request line of the stock protocol, '\n' included
// (the original's MAXLINE): DrainLines must refuse a longer one rather than
// buffer without end.
const MaxLine = 8192
