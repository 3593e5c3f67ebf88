package jobserver

import (
	"log/slog"
	"net"
	"runtime"
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
	// TODO(ex 3.4): under s.mu: if s.closing, close ln and return
	// lab.ErrServerClosed; otherwise record ln in s.listeners and s.wg.Add(1)
	// (defer s.wg.Done()). Then loop: Accept and hand each connection to
	// s.start. When Accept fails, remove ln from s.listeners and return
	// lab.ErrServerClosed if the server is closing, else the error.
	// Checked by TestEx3_4_Server.
	return lab.NotImplemented("3.4", "Server.Serve")
}

// start registers a new connection and starts its reader, unless the server
// is closing, in which case it closes the connection.
func (s *Server) start(nc net.Conn) {
	// TODO(ex 3.4): make a clientConn holding one reference (the reader's:
	// c.refs.Store(1)). Under s.mu: if s.closing, close nc and return;
	// otherwise add c to s.conns, s.wg.Add(1), and start a goroutine that
	// runs s.read(c) and then calls s.wg.Done(). Checked by TestEx3_4_Server.
	nc.Close()
}

// read is a connection's reader: it frames lines, gives each its job id, and
// queues the valid ones or answers the invalid ones itself. Queueing blocks
// while the queue is full, and then nothing is read from this client: that is
// the back-pressure.
func (s *Server) read(c *clientConn) {
	// TODO(ex 3.4): defer c.release(); read lines with a NewLineReader(c.nc)
	// until an error other than ErrTooLarge. For every line (too large
	// included): call s.cfg.OnLineRead if set, take the next id with
	// s.nextID.Add(1), then s.submit it unless it was too large; answer an
	// error with c.send(AppendError(buf[:0], id, err)) (reuse buf).
	// TODO(ex 3.7): count the line in s.submitted when it takes its id, and
	// an ERROR answer in s.failed before sending it.
	// Checked by TestEx3_4_Server, TestEx3_5_BackPressure, TestEx3_7_Statistics.
	c.release()
}

// submit parses a line and queues it as job id, waiting for room. It returns
// the protocol error to answer if the line is invalid or the server is
// shutting down.
func (s *Server) submit(c *clientConn, id uint64, line []byte) error {
	// TODO(ex 3.4): Parse the line (return its error); take a reference for
	// the job (c.refs.Add(1)) and s.queue.Put(Job{ID: id, Req: req, conn: c}).
	// Put blocks while the queue is full; that is the back-pressure (ex 3.5):
	// do not start a goroutine or keep a list here. If Put fails, drop the
	// reference again and return ErrShuttingDown. Checked by TestEx3_4_Server.
	return lab.NotImplemented("3.4", "Server.submit")
}

// work computes one job on worker w and answers it.
func (s *Server) work(w int, job Job) {
	// TODO(ex 3.4): call s.cfg.OnJobStart(job.ID) if set; format the answer in
	// s.workers[w].line (AppendOK, then Execute with &s.workers[w].scratch,
	// then '\n'; keep the grown buffer for the next job); send it on
	// job.conn; job.conn.release(). TODO(ex 3.7): count it in s.completed
	// before sending. Checked by TestEx3_4_Server.
	job.conn.release()
}

// Stats returns the server's counts. Completed and Failed are read before
// Submitted, and every request is counted submitted before it is counted
// answered, so a snapshot never shows more answered than submitted.
func (s *Server) Stats() Stats {
	// TODO(ex 3.7): load the three counters, Completed and Failed before
	// Submitted. Checked by TestEx3_7_Statistics.
	return Stats{}
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
	// TODO(ex 3.4): s.closeOnce.Do(s.shutdown) and return nil, so that later
	// calls wait for the first and return nil.
	return lab.NotImplemented("3.4", "Server.Close")
}

func (s *Server) shutdown() {
	// TODO(ex 3.4): under s.mu set s.closing and copy the listeners and
	// connections; release the lock; close the listeners and the
	// connections; s.queue.Close(); s.wg.Wait(); s.pool.Wait().
	// TODO(ex 3.6): the original's order instead, so that queued jobs are
	// still answered: do not close the connections; unblock their readers
	// with c.nc.SetReadDeadline(aLongTimeAgo) before closing the queue. The
	// connections then close themselves (release) when their reader and
	// their last job are done. Log the final Stats. Checked by
	// TestEx3_6_Shutdown.
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
	// TODO(ex 3.4): under c.mu, unless c.dead, set a write deadline of
	// c.srv.cfg.WriteTimeout from now and write line with one c.nc.Write; on
	// error set c.dead, close c.nc (which also stops its reader) and log at
	// Debug level.
	// Checked by TestEx3_4_Server.
}

// release drops one reference; the last one closes the connection.
func (c *clientConn) release() {
	if c.refs.Add(-1) == 0 {
		c.nc.Close()
		c.srv.forget(c)
	}
}
