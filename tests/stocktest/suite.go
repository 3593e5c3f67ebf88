// Package stocktest is the conformance suite of the stock servers: chapter 04
// (a pre-threaded server with reader-writer locks) and chapter 05 (a
// single-goroutine event loop) run the very same server checks. A chapter
// wires its package in with a few lines:
//
//	var impl = stocktest.Impl{NewServer: …, LoadTree: …, NewRWLock: …}
//	func TestEx4_2_Commands(t *testing.T) { stocktest.Commands(t, impl) }
//
// The server checks (Commands, Conservation, Persistence, Close, and
// BenchmarkServer) need nothing but the protocol (docs/protocols.md §3) and
// Config, so an event loop runs them unchanged:
//
//	var impl = stocktest.Impl{NewServer: func(c stocktest.Config) (lab.Server, error) { … }}
//	func TestEx5_4_StockCommands(t *testing.T) { stocktest.Commands(t, impl) }
//
// Tree, RWLock and WorkerPool check pieces only the threaded server has
// (LoadTree, NewTree, NewRWLock, a pool of Config.Workers); chapter 05 leaves
// those fields nil and does not call them. Conservation checks the tree too
// when LoadTree is set. Each check grades one exercise and can run alone;
// failure messages name the exercise of the chapter's test that called it.
package stocktest

import (
	"log/slog"
	"sync"
	"time"

	"serverlab/tools/given/lab"
	"serverlab/tools/given/stockfile"
)

// Impl is what a chapter hands to the suite. Fields a chapter does not have
// stay nil, and the checks that need them are not wired.
type Impl struct {
	// NewServer builds a stock server (every server check).
	NewServer func(Config) (lab.Server, error)

	// LoadTree loads a stock file into the chapter's tree (Tree, and the
	// tree-level half of Conservation). Chapter 04 only.
	LoadTree func(path string) (StockTree, error)
	// NewTree returns an empty tree whose stocks get their locks from
	// newLock, or sync.Mutexes if newLock is nil (Tree, Conservation).
	// Chapter 04 only.
	NewTree func(newLock func() sync.Locker) StockTree
	// NewRWLock returns an unlocked reader-writer lock (RWLock). onWait, if
	// not nil, must be called once by each Lock or RLock call that blocks,
	// just before it first waits, with writer telling which of the two it is.
	// Chapter 04 only.
	NewRWLock func(onWait func(writer bool)) RWLocker
	// Threaded says the server is chapter 04's pool of workers, and honours
	// the Config fields that only it has (IdleTimeout, WriteTimeout,
	// TreeLock, NewStockLock, OnLockWait): the checks of deadlines, of the
	// tree lock and of the lingering close run only then.
	Threaded bool
}

// Config is what the suite sets when it builds a server. It is in protocol
// terms, so that a threaded server and an event loop read it alike.
type Config struct {
	// StockPath is the stock file, in a temporary folder of the check's own.
	StockPath string
	// Workers is the number of worker goroutines; 0 means the default (4).
	// An event loop ignores it.
	Workers int
	// SyncInterval is how often the stocks are written back while clients
	// are connected; 0 means the default (16s).
	SyncInterval time.Duration
	// OnSync must be called after each write-back of the stock file, with its
	// result (nil, or the error that stopped it).
	OnSync func(error)
	// Saver must be the one the server writes the stock file with: checks set
	// its Intercept to make a write fail halfway.
	Saver stockfile.Saver
	// Logger must receive the server's log (the suite always sets it).
	Logger *slog.Logger

	// The fields below are chapter 04's (Impl.Threaded); an event loop
	// ignores them.

	// IdleTimeout and WriteTimeout bound how long a worker waits for a
	// client's next request and for a client to take its replies; 0 means
	// the server's defaults.
	IdleTimeout, WriteTimeout time.Duration
	// CloseGrace bounds how long Close lets a reply in flight finish and a
	// closing connection linger; 0 means the server's default.
	CloseGrace time.Duration
	// TreeLock makes trades take the tree's write lock (chapter 04's
	// TreeLock granularity) instead of the per-stock locks alone.
	TreeLock bool
	// NewStockLock, if set, must make the lock of each stock the server
	// loads (chapter 04's Config.NewStockLock).
	NewStockLock func() sync.Locker
	// OnLockWait, if set, must be called when a goroutine is about to wait
	// for the tree's reader-writer lock (the onWait of NewRWLock).
	OnLockWait func(writer bool)
}

// StockTree is the stock tree of chapter 04: a binary search tree keyed by ID,
// not balanced, its shape fixed by the order of insertion.
type StockTree interface {
	// Insert adds a stock; an ID already in the tree is an error.
	Insert(stockfile.Stock) error
	// Lookup finds a stock by ID.
	Lookup(id int) (stockfile.Stock, bool)
	// PreOrder lists the stocks in pre-order (node, left, right).
	PreOrder() []stockfile.Stock
	// Buy takes n shares: an unknown ID, or n more than the count, is an
	// error and changes nothing. Safe for concurrent use.
	Buy(id, n int) error
	// Sell adds n shares; an unknown ID is an error. Safe for concurrent use.
	Sell(id, n int) error
}

// RWLocker is a reader-writer lock (chapter 04's RWLock).
type RWLocker interface {
	RLock()
	RUnlock()
	Lock()
	Unlock()
}
