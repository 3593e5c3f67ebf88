package jobserver

import (
	"errors"
	"io"
	"log/slog"
	"maps"
	"net"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"serverlab/tools/given/jobs"
	"serverlab/tools/given/lab"
	"serverlab/tools/given/trywrite"
)

// Config configures a Server.
type Config struct {
	// Workers is the number of worker goroutines, the most jobs that run at
	// once (default runtime.NumCPU()).
	Workers int
	// QueueCap is the capacity of the job queue (default 1024). When it is
	// full, readers stop reading until a worker takes a job.
	QueueCap int
	// WriteTimeout bounds each write to a client (default 10s). A client that
	// stops reading its answers would otherwise hold its writer, and with it
	// Close, forever; after WriteTimeout without progress it is dropped.
	WriteTimeout time.Duration
	// MaxPending is how many bytes of answers a connection may have waiting
	// for its client before its reader stops reading requests (default
	// 64 KiB). Workers never wait for a client: they append to this outbox.
	MaxPending int
	// Logger receives the server's log (default slog.Default()).
	Logger *slog.Logger

	// Hooks for the test suite; nil in production.

	// OnLineRead is called by a connection's reader goroutine each time it has
	// read a line (valid or not, too large included), before the line takes
	// its job id.
	OnLineRead func()
	// OnJobStart is called by a worker just before it computes job id. The
	// worker waits while OnJobStart runs, so a test can hold workers.
	OnJobStart func(id uint64)
	// OnFastWrite is called with the bytes each non-blocking write of
	// answers took, before that write returns (the given fast path does it:
	// trywrite's Socket.Observed): the answer is on its way and the goroutine
	// that sent it waits, so a test can see that it was counted before it was
	// sent. A server without that fast path may never call it.
	OnFastWrite func(p []byte)
}

// Stats counts requests. Every line is Submitted when it takes its job id,
// then becomes Completed (answered OK) or Failed (answered ERROR); a request
// is counted before its answer is written, so a client holding an answer
// finds it counted.
type Stats struct {
	Submitted, Completed, Failed uint64
}

// Job is a validated request on its way from a reader to a worker.
type Job struct {
	ID   uint64
	Req  Request
	conn *clientConn
}

// worker is the state a worker keeps from job to job, so that its steady
// state allocates nothing: the scratch buffers of SORT and MATMUL and the
// buffer its answers are formatted in.
type worker struct {
	scratch jobs.Scratch
	line    []byte
}

// Server is the job server.
type Server struct {
	cfg     Config
	log     *slog.Logger
	queue   *BoundedQueue[Job]
	workers []worker      // workers[w] belongs to worker w alone
	done    chan struct{} // closed when Close begins: ends lab.Accept's retries

	nextID                       atomic.Uint64 // the last job id given out
	submitted, completed, failed atomic.Uint64

	// mu guards the fields below. No network call or wait happens under it.
	mu        sync.Mutex
	closing   bool
	pool      *Pool[Job] // nil until the first Serve starts the workers
	listeners map[net.Listener]struct{}
	conns     map[*clientConn]struct{}
	wg        sync.WaitGroup // Serve loops, readers and writers; Add only under mu while !closing

	closeOnce sync.Once
}

// New returns a server ready to Serve. It starts nothing: the workers start
// with the first Serve, so a server that is never served leaves nothing
// running, and Close has nothing to wait for.
func New(cfg Config) (*Server, error) {
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.NumCPU()
	}
	if cfg.QueueCap <= 0 {
		cfg.QueueCap = 1024
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 10 * time.Second
	}
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = 64 << 10
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Server{
		cfg:       cfg,
		log:       cfg.Logger,
		queue:     NewBoundedQueue[Job](cfg.QueueCap),
		workers:   make([]worker, cfg.Workers),
		done:      make(chan struct{}),
		listeners: make(map[net.Listener]struct{}),
		conns:     make(map[*clientConn]struct{}),
	}, nil
}

// Serve starts the workers (the first time) and accepts connections on ln,
// starting a reader and a writer goroutine for each, until Close. Accept
// errors that pass (out of file descriptors, a client that gave up) are
// retried with backoff by lab.Accept, so they never end Serve. It returns
// lab.ErrServerClosed after Close (at once, closing ln, if Close came first),
// or the error that made Accept fail for good.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		ln.Close()
		return lab.ErrServerClosed
	}
	if s.pool == nil {
		s.pool = NewPool(s.cfg.Workers, s.queue, s.work)
	}
	s.listeners[ln] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()

	for {
		nc, err := lab.Accept(ln, s.done, s.log)
		if err != nil {
			s.mu.Lock()
			defer s.mu.Unlock()
			delete(s.listeners, ln)
			if s.closing {
				return lab.ErrServerClosed
			}
			return err
		}
		s.start(nc)
	}
}

// start registers a new connection and starts its reader and its writer,
// unless the server is closing, in which case it closes the connection.
func (s *Server) start(nc net.Conn) {
	c := newClientConn(nc, s)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		nc.Close()
		return
	}
	s.conns[c] = struct{}{}
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		s.read(c)
	}()
	go func() {
		defer s.wg.Done()
		c.writeLoop()
	}()
}

// read is a connection's reader: it frames lines, gives each its job id, and
// queues the valid ones or answers the invalid ones itself. It blocks in two
// places, both on purpose: in Put while the queue is full, and before reading
// while the client's outbox is full. Either way nothing more is read from
// this client: that is the back-pressure. A line that is too large is
// answered, and ends the connection: the rest of it cannot be told from the
// next request.
func (s *Server) read(c *clientConn) {
	defer c.release()
	lr := NewLineReader(c.nc)
	var answer []byte // reused for this reader's ERROR answers
	for c.waitRoom() {
		line, err := lr.Next()
		if err != nil && !errors.Is(err, ErrTooLarge) {
			return // end of stream, a broken connection, or Close
		}
		if s.cfg.OnLineRead != nil {
			s.cfg.OnLineRead()
		}
		id := s.nextID.Add(1)
		s.submitted.Add(1)
		tooLarge := err != nil
		if err == nil {
			err = s.submit(c, id, line)
		}
		if err != nil {
			s.failed.Add(1)
			answer = AppendError(answer[:0], id, err)
			c.send(answer)
		}
		if tooLarge {
			c.lingerOnClose()
			return
		}
	}
}

// submit parses a line and queues it as job id, waiting for room. It returns
// the protocol error to answer if the line is invalid or the server is
// shutting down.
func (s *Server) submit(c *clientConn, id uint64, line []byte) error {
	req, err := Parse(line)
	if err != nil {
		return err
	}
	c.acquire() // the job's, released by the worker that answers it
	if err := s.queue.Put(Job{ID: id, Req: req, conn: c}); err != nil {
		c.release() // cannot be the last: the reader holds its own
		return ErrShuttingDown
	}
	return nil
}

// work computes one job on worker w and hands the answer to the job's
// connection. It never waits for the client: send only appends to the
// connection's outbox.
func (s *Server) work(w int, job Job) {
	if s.cfg.OnJobStart != nil {
		s.cfg.OnJobStart(job.ID)
	}
	st := &s.workers[w]
	line, err := Execute(job.Req, &st.scratch, AppendOK(st.line[:0], job.ID))
	if err != nil {
		line = AppendError(line[:0], job.ID, err)
		s.failed.Add(1)
	} else {
		line = append(line, '\n')
		s.completed.Add(1)
	}
	st.line = line
	job.conn.send(line)
	job.conn.release()
}

// Stats returns the server's counts. Completed and Failed are read before
// Submitted, and every request is counted submitted before it is counted
// answered, so a snapshot never shows more answered than submitted.
func (s *Server) Stats() Stats {
	completed, failed := s.completed.Load(), s.failed.Load()
	return Stats{Submitted: s.submitted.Load(), Completed: completed, Failed: failed}
}

// aLongTimeAgo is a deadline in the past: setting it makes a blocked Read
// return at once, without closing the connection (net/http does the same).
var aLongTimeAgo = time.Unix(1, 0)

// Close shuts the server down in the original's order, so that no accepted
// job is lost and no goroutine survives:
//
//  1. mark the server closing (so Close is idempotent and Serve stops);
//  2. close the listeners, which unblocks Accept;
//  3. stop every reader: a read deadline in the past unblocks a Read (the
//     connection stays open for the answers still to come), and a reader
//     waiting for room in its outbox is woken;
//  4. close the queue: readers blocked in Put answer "server shutting down",
//     workers drain what is queued;
//  5. wait for the Serve loops, readers and writers, then for the workers,
//     which finish and answer every queued job; each writer sends its
//     connection's last answers and closes it;
//  6. log the final statistics.
//
// A client that does not read its answers delays Close by WriteTimeout at
// most. Later calls wait for the first to finish and return nil.
func (s *Server) Close() error {
	s.closeOnce.Do(s.shutdown)
	return nil
}

func (s *Server) shutdown() {
	s.mu.Lock()
	s.closing = true
	close(s.done)
	listeners := slices.Collect(maps.Keys(s.listeners))
	conns := slices.Collect(maps.Keys(s.conns))
	pool := s.pool
	s.mu.Unlock()

	for _, ln := range listeners {
		ln.Close()
	}
	for _, c := range conns {
		c.stopReading()
	}
	s.queue.Close()
	s.wg.Wait()
	if pool != nil {
		pool.Wait()
	}

	st := s.Stats()
	s.log.Info("job server stopped", "submitted", st.Submitted, "completed", st.Completed, "failed", st.Failed)
}

// forget removes a closed connection from the registry.
func (s *Server) forget(c *clientConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
}

// How long, and how much, a connection ended for a too-large line is read
// and discarded after its last answer, before it is closed (net/http's
// numbers for the same problem). Closing a socket with unread input makes
// the kernel send a reset, and a reset can destroy the answer the client has
// not read yet: the client would never learn why it was cut off.
const (
	lingerTimeout = 500 * time.Millisecond
	lingerBytes   = 256 << 10
)

// clientConn is one client's connection. Its reader and the workers answering
// its jobs hand answers to it with send: when the socket takes the answer at
// once (the usual case) send writes it straight away, without waiting;
// otherwise it goes to an outbox that the connection's writer goroutine sends.
// Nobody ever waits on the socket but the writer, so a client that does not
// read can hold up only its own writer, never a worker.
type clientConn struct {
	nc  net.Conn
	raw trywrite.Socket // the socket under nc: send's one non-blocking write (given)
	srv *Server

	mu      sync.Mutex
	ready   sync.Cond // the writer waits on it: an answer, or the last reference gone
	room    sync.Cond // the reader waits on it: the outbox below MaxPending
	refs    int       // the reader's, plus one per queued or running job
	pending []byte    // answers waiting for the writer, whole lines
	writing int       // bytes the writer is writing now (outside mu)
	dead    bool      // a write failed: answers are dropped, the reader stops
	stopped bool      // Close stopped the reader
	linger  bool      // half-close and drain before closing (a too-large line)
}

func newClientConn(nc net.Conn, s *Server) *clientConn {
	c := &clientConn{nc: nc, raw: trywrite.New(nc).Observed(s.cfg.OnFastWrite), srv: s, refs: 1} // the reader's reference
	c.ready.L = &c.mu
	c.room.L = &c.mu
	return c
}

// acquire takes a reference for a job.
func (c *clientConn) acquire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refs++
}

// release drops a reference. When the last is gone no answer can come any
// more: the writer sends what is left and closes the connection.
func (c *clientConn) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refs--
	if c.refs == 0 {
		c.ready.Signal()
	}
}

// send hands one whole answer line to the client without ever blocking on
// the network. If nothing is waiting in the outbox and the writer is not
// writing, it first tries c.raw.Write, one non-blocking write: in the steady
// state the socket takes the whole line and the answer leaves at once,
// without waking the writer goroutine (which, while the workers keep both
// CPUs busy, could wait for a free CPU until the next job ends). Whatever the socket
// does not take goes to the outbox, after which the writer sends it, with its
// deadline. The lock is held for the append or the one non-blocking write, so
// two answers never interleave and a worker is back at work at once.
func (c *clientConn) send(line []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return
	}
	if len(c.pending) == 0 && c.writing == 0 {
		line = line[c.raw.Write(line):]
		if len(line) == 0 {
			return
		}
	}
	c.pending = append(c.pending, line...)
	c.ready.Signal()
}

// waitRoom waits while the client has MaxPending bytes of answers or more
// waiting for it, and reports whether the reader may go on.
func (c *clientConn) waitRoom() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.pending)+c.writing >= c.srv.cfg.MaxPending && !c.dead && !c.stopped {
		c.room.Wait()
	}
	return !c.dead && !c.stopped
}

// stopReading stops the reader for Close: a Read returns at once, a wait for
// room ends. The connection stays open for the answers still to come.
func (c *clientConn) stopReading() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	c.nc.SetReadDeadline(aLongTimeAgo) // an error means it is closed already
	c.room.Signal()
}

// lingerOnClose asks the writer to half-close and drain the connection
// before closing it.
func (c *clientConn) lingerOnClose() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.linger = true
}

// writeLoop is the connection's writer: it takes everything in the outbox
// and writes it with one Write, outside the lock, with a write deadline, until
// the last reference is gone and the outbox is empty, or a write fails. Then
// it closes the connection.
func (c *clientConn) writeLoop() {
	var batch []byte
	for {
		c.mu.Lock()
		for len(c.pending) == 0 && c.refs > 0 && !c.dead {
			c.ready.Wait()
		}
		if c.dead || len(c.pending) == 0 {
			c.mu.Unlock()
			break // a write failed, or every answer is sent and no more can come
		}
		batch, c.pending = c.pending, batch[:0]
		c.writing = len(batch)
		c.mu.Unlock()

		c.nc.SetWriteDeadline(time.Now().Add(c.srv.cfg.WriteTimeout))
		_, err := c.nc.Write(batch)

		c.mu.Lock()
		c.writing = 0
		if err != nil {
			c.dead = true
			c.pending = nil
			c.srv.log.Debug("client gone or not reading; dropping its answers", "remote", c.nc.RemoteAddr(), "err", err)
		}
		c.room.Signal()
		c.mu.Unlock()
		if err != nil {
			c.nc.Close() // unblocks the reader too
		}
	}
	c.close()
}

// close ends the connection once the writer is done, lingering first if the
// reader asked for it and Close has not stopped reading.
func (c *clientConn) close() {
	c.mu.Lock()
	linger := c.linger && !c.dead && !c.stopped
	if linger {
		c.nc.SetReadDeadline(time.Now().Add(lingerTimeout))
	}
	c.mu.Unlock()
	if tc, ok := c.nc.(*net.TCPConn); linger && ok {
		tc.CloseWrite() // the client sees the end of its answers
		io.Copy(io.Discard, io.LimitReader(c.nc, lingerBytes))
	}
	c.srv.log.Debug("closing connection", "remote", c.nc.RemoteAddr())
	c.nc.Close()
	c.srv.forget(c)
}
