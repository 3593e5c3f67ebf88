package jobserver

import (
	"errors"
	"log/slog"
	"maps"
	"net"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"serverlab/tools/jobs"
	"serverlab/tools/lab"
)

// Config configures a Server.
type Config struct {
	// Workers is the number of worker goroutines, the most jobs that run at
	// once (default runtime.NumCPU()).
	Workers int
	// QueueCap is the capacity of the job queue (default 1024). When it is
	// full, readers stop reading until a worker takes a job.
	QueueCap int
	// WriteTimeout bounds the writing of one answer (default 10s). A client
	// that stops reading its answers would otherwise hold a worker, and with
	// it Close, forever; after WriteTimeout it is dropped.
	WriteTimeout time.Duration
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
	pool    *Pool[Job]
	workers []worker // workers[w] belongs to worker w alone

	nextID                       atomic.Uint64 // the last job id given out
	submitted, completed, failed atomic.Uint64

	// mu guards the fields below. No network call or wait happens under it.
	mu        sync.Mutex
	closing   bool
	listeners map[net.Listener]struct{}
	conns     map[*clientConn]struct{}
	wg        sync.WaitGroup // Serve loops and readers; Add only under mu while !closing

	closeOnce sync.Once
}

// New returns a server whose workers are running, ready to Serve. Close stops
// them.
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
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Server{
		cfg:       cfg,
		log:       cfg.Logger,
		queue:     NewBoundedQueue[Job](cfg.QueueCap),
		workers:   make([]worker, cfg.Workers),
		listeners: make(map[net.Listener]struct{}),
		conns:     make(map[*clientConn]struct{}),
	}
	s.pool = NewPool(cfg.Workers, s.queue, s.work)
	return s, nil
}

// Serve accepts connections on ln and starts one reader goroutine for each,
// until Close. It returns lab.ErrServerClosed after Close (at once, closing
// ln, if Close came first), or the error that made Accept fail.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		ln.Close()
		return lab.ErrServerClosed
	}
	s.listeners[ln] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()

	for {
		nc, err := ln.Accept()
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

// start registers a new connection and starts its reader, unless the server
// is closing, in which case it closes the connection.
func (s *Server) start(nc net.Conn) {
	c := &clientConn{nc: nc, srv: s}
	c.refs.Store(1) // the reader's
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		nc.Close()
		return
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.read(c)
	}()
}

// read is a connection's reader: it frames lines, gives each its job id, and
// queues the valid ones or answers the invalid ones itself. Queueing blocks
// while the queue is full, and then nothing is read from this client: that is
// the back-pressure.
func (s *Server) read(c *clientConn) {
	defer c.release()
	lr := NewLineReader(c.nc)
	var answer []byte // reused for this reader's ERROR answers
	for {
		line, err := lr.Next()
		if err != nil && !errors.Is(err, ErrTooLarge) {
			return // end of stream, a broken connection, or Close
		}
		if s.cfg.OnLineRead != nil {
			s.cfg.OnLineRead()
		}
		id := s.nextID.Add(1)
		s.submitted.Add(1)
		if err == nil {
			err = s.submit(c, id, line)
		}
		if err != nil {
			s.failed.Add(1)
			answer = AppendError(answer[:0], id, err)
			c.send(answer)
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
	c.refs.Add(1) // the job's, released by the worker that answers it
	if err := s.queue.Put(Job{ID: id, Req: req, conn: c}); err != nil {
		c.refs.Add(-1) // cannot reach 0: the reader holds its own
		return ErrShuttingDown
	}
	return nil
}

// work computes one job on worker w and answers it.
func (s *Server) work(w int, job Job) {
	if s.cfg.OnJobStart != nil {
		s.cfg.OnJobStart(job.ID)
	}
	st := &s.workers[w]
	line := AppendOK(st.line[:0], job.ID)
	line = Execute(job.Req, &st.scratch, line)
	line = append(line, '\n')
	st.line = line
	s.completed.Add(1)
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
//  3. unblock every reader with a read deadline in the past (the connection
//     stays open for the answers still to come);
//  4. close the queue: readers blocked in Put answer "server shutting down",
//     workers drain what is queued;
//  5. wait for the Serve loops and readers, then for the workers, which
//     finish and answer every queued job;
//  6. by then every connection has been closed by the last of its reader and
//     jobs to finish (clientConn.release); log the final statistics.
//
// Later calls wait for the first to finish and return nil.
func (s *Server) Close() error {
	s.closeOnce.Do(s.shutdown)
	return nil
}

func (s *Server) shutdown() {
	s.mu.Lock()
	s.closing = true
	listeners := slices.Collect(maps.Keys(s.listeners))
	conns := slices.Collect(maps.Keys(s.conns))
	s.mu.Unlock()

	for _, ln := range listeners {
		ln.Close()
	}
	for _, c := range conns {
		c.nc.SetReadDeadline(aLongTimeAgo) // an error means it is closed already
	}
	s.queue.Close()
	s.wg.Wait()
	s.pool.Wait()

	st := s.Stats()
	s.log.Info("job server stopped", "submitted", st.Submitted, "completed", st.Completed, "failed", st.Failed)
}

// forget removes a closed connection from the registry.
func (s *Server) forget(c *clientConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
}

// clientConn is one client's connection, shared by its reader and its queued
// jobs: any of them may be the last to need it, so it counts references and
// the last release closes it.
type clientConn struct {
	nc   net.Conn
	srv  *Server
	refs atomic.Int64 // the reader's, plus one per queued or running job

	mu   sync.Mutex // serialises answers: one Write per line, under mu
	dead bool       // a write failed; later answers are dropped
}

// send writes one whole answer line. net.Conn.Write returns only when every
// byte is written (the runtime retries short writes), and mu keeps two
// workers' lines from interleaving. A client that does not read its answers
// is dropped after WriteTimeout (the original's write-up mentions no send
// timeout).
func (c *clientConn) send(line []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return
	}
	c.nc.SetWriteDeadline(time.Now().Add(c.srv.cfg.WriteTimeout))
	if _, err := c.nc.Write(line); err != nil {
		c.dead = true
		c.nc.Close() // unblocks the reader too; release's Close is then harmless
		c.srv.log.Debug("client gone; dropping its answers", "remote", c.nc.RemoteAddr(), "err", err)
	}
}

// release drops one reference; the last one closes the connection.
func (c *clientConn) release() {
	if c.refs.Add(-1) == 0 {
		c.nc.Close()
		c.srv.forget(c)
	}
}
