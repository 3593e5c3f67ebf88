package stock

import (
	"log/slog"
	"net"
	"sync"
	"time"

	"serverlab/tools/given/stockfile"
)

// Granularity says how trades use the tree's reader-writer lock.
type Granularity int

const (
	// StockLocks (the default): trades take only the tree's read lock and rely
	// on the stock's own mutex, so trades never wait for each other's turn on
	// the tree, and never hold back a show. A listing shows each stock as it
	// was at some instant during the listing.
	StockLocks Granularity = iota
	// TreeLock: `show` reads under the tree's read lock and `buy`/`sell` take
	// its write lock, so a listing is a snapshot no trade is half-way through.
	// Trades are serialised; on a busy machine a goroutine descheduled while
	// holding the write lock stalls every other request, which made this
	// about 20% slower with 16 workers (the lesson's experiment 3).
	TreeLock
)

// Config configures a Server. The zero value of every field is a sensible
// default.
type Config struct {
	// StockPath is the stock file (default "stock.txt").
	StockPath string
	// Workers is the number of worker goroutines (default 4): at most this
	// many requests run at once. A worker serves the requests a client has
	// sent, then hands the connection back to the waiting room; it never
	// waits for a client to send.
	Workers int
	// Pending bounds the connections the server holds beyond one per worker
	// (default 4096, as the original's PENDING_CONNECTION_N): waiting for
	// their client's next request or for a worker. With Workers + Pending
	// connections open the master stops accepting, and the kernel's backlog
	// holds new clients.
	Pending int
	// SyncInterval is how often the tree is written back while clients are
	// connected (default 16s).
	SyncInterval time.Duration
	// Granularity chooses how trades lock the tree (default StockLocks).
	Granularity Granularity
	// OnSync, if set, is called after each write-back with its result. Tests
	// use it to wait for a sync instead of sleeping.
	OnSync func(error)
	// Saver writes the file; its Intercept lets tests inject a failing write.
	Saver stockfile.Saver
	// CloseGrace bounds how long Close lets a reply in flight finish writing
	// to a client that does not read (default 1s).
	CloseGrace time.Duration
	// IdleTimeout bounds how long a client may take to send its next whole
	// request (default 30s); a client silent for longer is disconnected. A
	// silent client holds no worker, only one of the Pending places and a
	// file descriptor: without the timeout, enough of them would fill the
	// places for good.
	IdleTimeout time.Duration
	// WriteTimeout bounds how long a worker waits for a client to take its
	// replies (default 10s): a client that pipelines requests and never reads
	// fills the socket buffers, and the worker's write would block forever.
	WriteTimeout time.Duration
	// NewStockLock, if set, makes the lock of each stock (default: a new
	// sync.Mutex). Tests pass locks that stop a trade inside its critical
	// section, to see who waits for whom.
	NewStockLock func() sync.Locker
	// OnLockWait, if set, is called each time a goroutine is about to wait
	// for the tree's reader-writer lock (see NewRWLock). Tests use it to know,
	// without timing, that a show or a trade waits.
	OnLockWait func(writer bool)
	// Logger receives the server's log (default slog.Default()).
	Logger *slog.Logger
}

// Server is the stock server: its design is yours. The suite reaches it
// only through New, Serve and Close (stock_test.go) and over the network; the
// program in cmd/stockserver fills in Config. The tree and the
// reader-writer lock (exercises 4.1 and 4.3, whose APIs the suite calls
// directly) are the guided track's: use them, or not, in a server of your
// own.
//
//mirror:keep the open track's own: its design is the student's
type Server struct {
	cfg Config
}

// New loads the stock file (StockPath) and returns a server ready to Serve.
// It starts no goroutine (Serve does).
//
//mirror:keep the open track's own: its design is the student's
func New(cfg Config) (*Server, error) {
	return &Server{cfg: cfg}, nil
}

// Serve accepts connections on ln and serves them until Close. It always
// returns a non-nil error: lab.ErrServerClosed after Close.
//
// The exercises are the suite's checks; each is done when what it says is
// true of the server as a whole (chapters/04/README.md has the protocol, and
// docs/protocols.md §3 every reply):
//
// TODO(ex 4.2): Done when: every request line (show, buy, sell, exit, and
// the empty line) gets the original's reply record, byte for byte, in order,
// and pipelined requests are answered in order too. Checked by
// TestEx4_2_Commands.
//
// TODO(ex 4.4): Done when: however many clients trade at once, no share is
// created or lost (two buyers never both take the last shares), and a show
// never sees a trade half-way through (with Granularity TreeLock, a listing
// is a snapshot). Checked by TestEx4_4_Conservation.
//
// TODO(ex 4.5): Done when: the server is pre-threaded, as the original:
// Workers goroutines run the requests, at most Workers at once, and none of
// them waits for a client to send (silent clients, however many, delay
// nobody's request); at most Workers + Pending connections are open; a
// client that sends nothing (IdleTimeout) is disconnected, and one that reads
// nothing (WriteTimeout) cannot hold a worker for ever. Checked by
// TestEx4_5_WorkerPool.
//
// TODO(ex 4.6): Done when: the stocks are written back to StockPath, through
// Saver, every SyncInterval while clients are connected and when the last
// one leaves; nothing is written while nobody trades, a failed write is
// retried, and OnSync hears every outcome. Checked by TestEx4_6_Persistence.
//
// TODO(ex 4.7): Done when: Close stops accepting, wakes every connection,
// lets a reply in flight finish within CloseGrace without resetting what the
// client has not read, writes the tree back one last time and returns that
// write's error once every goroutine has ended. Checked by TestEx4_7_Close.
func (s *Server) Serve(ln net.Listener) error {
	ln.Close()
	return notImplemented("4.5", "Server.Serve (open track: the design is yours)")
}

// Close stops the server, writes the stocks back and waits for every
// goroutine it started. It is safe to call more than once, and before Serve.
//
//mirror:keep the open track's own: its design is the student's
func (s *Server) Close() error {
	return nil
}

// rearm returns the deadline to use for a wait that may last up to d: the
// current one while at least d is left, or else one d plus a slack of d/8
// from now (moved reports which). Moving a deadline costs a timer operation
// in the runtime, and a busy client asks for thousands of waits a second:
// with the slack, one deadline serves every wait of the next d/8, and a wait
// is cut after between d and 9d/8.
//
//mirror:keep the open track's own: its design is the student's
func rearm(current time.Time, d time.Duration) (at time.Time, moved bool) {
	now := time.Now()
	if current.Sub(now) >= d {
		return current, false
	}
	return now.Add(d + d/8), true
}
