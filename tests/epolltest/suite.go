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

	"serverlab/tools/lab"
	"serverlab/tools/wire"
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
	// NewChat builds the chat server on the loop.
	NewChat func(ChatConfig) (lab.Server, error)
	// NewStock builds the stock server on the loop.
	NewStock func(StockConfig) (lab.Server, error)
}

// ChatConfig is what the suite sets when it builds a chat server.
type ChatConfig struct {
	// UsersPath is the users file, in a temporary folder of the check's own.
	UsersPath string
	// LoginTimeout is how long a new connection has to log in; 0 means the
	// server's default.
	LoginTimeout time.Duration
	Limits
}

// StockConfig is what the suite sets when it builds a stock server.
type StockConfig struct {
	// StockPath is the stock file, in a temporary folder of the check's own.
	StockPath string
	Limits
}

// Limits bound a connection's unsent output; 0 means the chapter's default.
type Limits struct {
	// HighWater: at this many unsent bytes the loop stops reading from the
	// connection, until its output has been sent.
	HighWater int
	// MaxPending: at this many unsent bytes the connection is closed (its
	// client does not read what others send it).
	MaxPending int
}

// MaxLine is the longest request line of the stock protocol, '\n' included
// (the original's MAXLINE): DrainLines must refuse a longer one rather than
// buffer without end.
const MaxLine = 8192
