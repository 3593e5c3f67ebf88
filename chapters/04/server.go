package stock

import (
	"bufio"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"serverlab/tools/given/lab"
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

// Server is the pre-threaded stock server.
type Server struct {
	cfg  Config
	log  *slog.Logger
	tree *Tree
	lock *RWLock // readers: show and write-back; writers: trades (with TreeLock)

	dirty  atomic.Bool // the tree changed since the last write-back
	saveMu sync.Mutex  // one write-back at a time

	ready  chan *session // unbuffered: the waiting room hands a client with a whole request to a free worker
	places chan struct{} // one token per open connection, Workers + Pending of them

	// mu guards the fields below it.
	mu      sync.Mutex
	closed  bool
	ln      net.Listener
	conns   map[net.Conn]struct{} // every open connection: waiting or being served
	started bool                  // Serve has started the workers

	quit    chan struct{}  // closed when Close starts
	stopped chan struct{}  // closed when the first Close call has finished
	wg      sync.WaitGroup // Serve, the workers, the waiting connections and the syncer
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
		ready:   make(chan *session),
		places:  make(chan struct{}, cfg.Workers+cfg.Pending),
		conns:   make(map[net.Conn]struct{}),
		quit:    make(chan struct{}),
		stopped: make(chan struct{}),
	}, nil
}

// Serve accepts connections on ln until Close. It always returns a non-nil
// error: lab.ErrServerClosed after Close.
//
// As given, Serve starts a goroutine per connection, like chapter 02's chat
// server, which waits for each request and serves it: enough to try the
// commands (exercise 4.2). Exercise 4.5 turns it into a pre-threaded server:
// the master only accepts, and a new connection goes to the waiting room
// (park), where it waits for its client's first request without a worker;
// the workers take clients that have a whole request to run.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return lab.ErrServerClosed
	}
	if s.started { // a server serves one listener: the one Close closes
		s.mu.Unlock()
		ln.Close()
		return lab.ErrServerClosed
	}
	s.started, s.ln = true, ln
	s.wg.Add(1) // Serve itself; the goroutines it starts join with wg.Go
	s.mu.Unlock()
	defer s.wg.Done()
	s.wg.Go(s.syncEvery)

	// TODO(ex 4.5): Done when: Serve is the master of a pre-threaded server:
	// Workers worker goroutines, counted in s.wg so that Close waits for them,
	// run the requests, and every accepted connection goes to the waiting room
	// (park), not to a goroutine that serves it to its end. Checked by
	// TestEx4_5_WorkerPool.
	for {
		// A place first: with Workers + Pending connections open, new
		// clients wait in the kernel's backlog.
		if !s.reserve() {
			return lab.ErrServerClosed
		}
		// lab.Accept waits and retries when the process is out of file
		// descriptors (EMFILE): a flood of idle clients must not end Serve.
		conn, err := lab.Accept(ln, s.quit, s.log)
		if err != nil {
			s.release()
			if s.isClosed() {
				return lab.ErrServerClosed
			}
			return err
		}
		ss := s.open(conn)
		if ss == nil {
			return lab.ErrServerClosed
		}
		s.wg.Go(func() {
			for s.awaitRequest(ss) && s.serveBatch(ss) {
			}
			s.finish(ss)
		})
	}
}

// worker runs requests and never waits for one: it takes a client that has
// a whole request buffered, runs every request buffered (serveBatch), and
// puts the connection back in the waiting room, or ends it. A client that
// says nothing therefore holds no worker: however many clients are silent,
// the next request waits only for the requests ahead of it. Once the server
// is closing, a client taken from the waiting room is closed unserved.
func (s *Server) worker() {
	// TODO(ex 4.5): Done when: until the server closes, the worker takes each
	// client that s.ready hands it, runs its buffered requests (serveBatch) and
	// parks the connection again if it goes on, or finishes it; a client taken
	// once the server is closing is finished unserved. Checked by
	// TestEx4_5_WorkerPool.
}

// park puts a connection in the waiting room: a goroutine of its own waits
// until the client has sent a whole request (awaitRequest), then hands it to
// the next free worker. A goroutine blocked in a read costs its stack and no
// thread (the runtime waits for all of them with one epoll, as Apache's
// event MPM waits for its idle keep-alive connections), and it runs no
// request: Workers still bounds the work in progress.
func (s *Server) park(ss *session) {
	// TODO(ex 4.5): Done when: a goroutine of the connection's own, counted in
	// s.wg, waits for the client's next whole request (awaitRequest; if the
	// connection ends instead, it is finished) and hands the session to a free
	// worker through s.ready; if the server closes first, the connection is
	// finished unserved. Checked by TestEx4_5_WorkerPool.
	s.finish(ss)
}

// reserve waits for one of the Workers + Pending places; it reports false
// if the server closes first. release gives a place back.
func (s *Server) reserve() bool {
	select {
	case s.places <- struct{}{}:
		return true
	case <-s.quit:
		return false
	}
}

func (s *Server) release() { <-s.places }

// open registers a new connection and returns its session, or nil if the
// server is closing (the connection is then closed and its place released).
func (s *Server) open(conn net.Conn) *session {
	if !s.track(conn) {
		conn.Close()
		s.release()
		return nil
	}
	s.log.Debug("connected", "remote", conn.RemoteAddr())
	return &session{conn: conn, r: bufio.NewReaderSize(conn, maxLine)}
}

// finish ends a connection: it closes it, forgets it, gives its place back,
// and writes the stocks back if it was the last client.
func (s *Server) finish(ss *session) {
	s.closeConn(ss.conn)
	s.log.Debug("connection closed", "remote", ss.conn.RemoteAddr())
	last := s.untrack(ss.conn)
	s.release()
	if last {
		s.sync("the last client left")
	}
}

// closeConn closes a connection that has ended.
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

// track registers conn as open, so that Close can reach it. It reports
// false if the server is closing.
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

// clients is the number of open connections.
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
// reply it is writing (then its connection is closed), closes the waiting
// connections, waits for every goroutine, and writes the tree back one last
// time. It is safe to call more
// than once, also concurrently: every call waits until the server has stopped
// and the last write-back is done; later calls return nil.
//
// Close closes no connection itself: one waiting for its client is woken by
// a read deadline in the past and closed gracefully by its own goroutine
// (closeConn), and one a worker is writing a reply to keeps it, the write
// bounded by CloseGrace; closing it could cut the reply in the middle. A client
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
	// TODO(ex 4.7): Done when: every open connection (s.conns) is
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
