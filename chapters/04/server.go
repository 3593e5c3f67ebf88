package stock

import (
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"serverlab/tools/lab"
	"serverlab/tools/stockfile"
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
	// Workers is the number of worker goroutines, each serving one connection
	// at a time (default 4).
	Workers int
	// Pending bounds the buffer of accepted connections waiting for a worker
	// (default 4096, as the original's PENDING_CONNECTION_N). When it is full
	// the master stops accepting and the kernel's backlog holds new clients.
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
	// IdleTimeout bounds how long a worker waits for a client's next request
	// (default 30s). A worker serves one client to the end, so without it as
	// many idle clients as workers would stop the server: each of them holds
	// a worker forever. A client silent for longer is disconnected.
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

// Server is the pre-threaded stock server.
type Server struct {
	cfg  Config
	log  *slog.Logger
	tree *Tree
	lock *RWLock // readers: show and write-back; writers: trades (with TreeLock)

	dirty  atomic.Bool // the tree changed since the last write-back
	saveMu sync.Mutex  // one write-back at a time

	// mu guards the fields below it.
	mu      sync.Mutex
	closed  bool
	ln      net.Listener
	conns   map[net.Conn]struct{} // connections a worker is serving
	started bool                  // Serve has started the workers

	quit    chan struct{}  // closed when Close starts
	stopped chan struct{}  // closed when the first Close call has finished
	wg      sync.WaitGroup // Serve, the workers and the syncer
}

// New loads the stock file and returns a server ready to Serve.
func New(cfg Config) (*Server, error) {
	if cfg.StockPath == "" {
		cfg.StockPath = "stock.txt"
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 4
	}
	if cfg.Pending <= 0 {
		cfg.Pending = 4096
	}
	if cfg.SyncInterval <= 0 {
		cfg.SyncInterval = 16 * time.Second
	}
	if cfg.CloseGrace <= 0 {
		cfg.CloseGrace = time.Second
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 30 * time.Second
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 10 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	tree, err := load(cfg.StockPath, cfg.NewStockLock)
	if err != nil {
		return nil, err
	}
	// A kill -9 during a write-back leaves its temporary file; nothing else
	// would ever remove it.
	if _, err := stockfile.CleanTemps(cfg.StockPath, cfg.Logger); err != nil {
		cfg.Logger.Warn("could not remove stale temporary stock files", "err", err)
	}
	return &Server{
		cfg:     cfg,
		log:     cfg.Logger,
		tree:    tree,
		lock:    NewRWLock(cfg.OnLockWait),
		conns:   make(map[net.Conn]struct{}),
		quit:    make(chan struct{}),
		stopped: make(chan struct{}),
	}, nil
}

// Serve accepts connections on ln until Close. It always returns a non-nil
// error: lab.ErrServerClosed after Close.
//
// As given, Serve starts a goroutine per connection, like chapter 02's chat
// server: enough to try the commands (exercise 4.2). Exercise 4.5 turns it
// into the original's pre-threaded server.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return lab.ErrServerClosed
	}
	if s.started {
		s.mu.Unlock()
		return errors.New("stock: Serve called twice")
	}
	s.started, s.ln = true, ln
	s.wg.Add(1) // Serve itself; the goroutines it starts join with wg.Go
	s.mu.Unlock()
	defer s.wg.Done()
	s.wg.Go(s.syncEvery)

	// TODO(ex 4.5): Done when: Serve is the master of a pre-threaded server: a
	// bounded buffer of Pending connections feeds Workers worker goroutines,
	// counted in s.wg so that Close waits for them, which end when Serve does;
	// each accepted connection waits for room in the buffer, and when the
	// server closes while it waits, it is closed and Serve returns
	// lab.ErrServerClosed. No goroutine per connection. Checked by
	// TestEx4_5_WorkerPool.
	for {
		// lab.Accept waits and retries when the process is out of file
		// descriptors (EMFILE): a flood of idle clients must not end Serve.
		conn, err := lab.Accept(ln, s.quit, s.log)
		if err != nil {
			if s.isClosed() {
				return lab.ErrServerClosed
			}
			return err
		}
		s.wg.Go(func() { s.serveOne(conn) })
	}
}

// worker serves whole connections, one at a time, until the buffer is closed.
// Connections still waiting when the server closes are closed unserved.
func (s *Server) worker(pending <-chan net.Conn) {
	// TODO(ex 4.5): Done when: the worker serves, one at a time and each to its
	// end, every connection that comes from pending, and returns once pending
	// is closed. Checked by TestEx4_5_WorkerPool.
}

// serveOne serves one connection from start to end, closes it, and writes the
// stocks back if it was the last client.
func (s *Server) serveOne(conn net.Conn) {
	if !s.track(conn) {
		conn.Close() // the server is closing
		return
	}
	s.serveConn(conn)
	s.closeConn(conn)
	if last := s.untrack(conn); last {
		s.sync("the last client left")
	}
}

// closeConn closes a connection served to its end.
func (s *Server) closeConn(conn net.Conn) {
	// TODO(ex 4.7): Done when: a connection closed while the server is closing
	// loses no reply the client has not read yet: a TCP connection is closed
	// gracefully (lingering close: the write side shut, the client's remaining
	// input read and discarded until it closes too or CloseGrace passes, then
	// closed), because closing a socket with unread input makes the kernel send
	// a reset that can destroy them. Lingering is Close's only: a connection
	// that ends on its own (exit, end of stream) is closed at once; the client
	// sees the end of stream at once (the write side is shut before the drain);
	// the drain ends as soon as the client closes, and never lasts past
	// CloseGrace. Checked by TestEx4_7_Close.
	conn.Close()
}

// track registers conn as being served, so that Close can reach it. It
// reports false if the server is closing.
func (s *Server) track(conn net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[conn] = struct{}{}
	return true
}

// untrack forgets conn and reports whether it was the last client.
func (s *Server) untrack(conn net.Conn) (last bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, conn)
	return len(s.conns) == 0
}

// clients is the number of connections being served.
func (s *Server) clients() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Close stops the server: it stops accepting, lets every worker finish the
// reply it is writing (then its connection is closed), waits for every
// goroutine, and writes the tree back one last time. It is safe to call more
// than once, also concurrently: every call waits until the server has stopped
// and the last write-back is done; later calls return nil.
//
// A worker blocked reading is woken by a read deadline in the past, not by
// closing its connection: closing could cut a reply in the middle. A client
// that does not read its reply gets CloseGrace to do so.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		<-s.stopped // the first call is still stopping the server: wait for it
		return nil
	}
	defer close(s.stopped)
	s.closed = true
	close(s.quit)
	if s.ln != nil {
		s.ln.Close()
	}
	// TODO(ex 4.7): Done when: every connection being served (s.conns) is
	// woken, still under s.mu: a blocked read returns at once, and a reply to a
	// client that does not read is bounded by CloseGrace. As given, Close waits
	// for the clients to leave by themselves.
	s.mu.Unlock()

	s.wg.Wait()
	// TODO(ex 4.7): Done when: the tree is written back one last time, after
	// every worker has stopped, and Close returns that write-back's error.
	// Checked by TestEx4_7_Close.
	return nil
}
