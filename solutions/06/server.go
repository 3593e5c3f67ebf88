package web

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"time"

	"serverlab/tools/given/lab"
)

// Server is the OSTEP web server: one master goroutine (Serve) accepts
// connections into a buffer of cfg.Buffers slots, and cfg.Threads workers
// take them out in the order cfg.Policy says and serve them.
//
//	            slots (cfg.Buffers)
//	master ──▶ [ job | job | job ] ──▶ worker 1 … worker t
//	 Accept     FIFO: channel            read (FIFO), respond, close
//	            SFF:  heap by size
type Server struct {
	h     *Handler
	cfg   Config
	log   *slog.Logger
	queue queue

	// slots holds one token per job in the buffer. The master puts one in
	// before it accepts (blocking while the buffer is full, so extra clients
	// wait in the kernel's backlog); a worker takes one out when it takes a
	// job.
	slots chan struct{}
	done  chan struct{} // closed by Close: wakes the master waiting for a slot
	ctx   context.Context
	stop  context.CancelFunc // cancels ctx: kills running CGI programs
	seq   uint64             // arrival counter; only the master touches it
	start time.Time          // for SFF ageing

	closeOnce sync.Once // every Close call waits for the first to finish

	mu     sync.Mutex
	closed bool
	ln     net.Listener
	conns  map[net.Conn]struct{} // accepted and not finished, for Close to close

	wg sync.WaitGroup // Serve, the workers and the SFF master's readers
}

// queue is the buffer between the master and the workers. The master holds a
// slot for every job it pushes, so push never blocks.
type queue interface {
	push(j *job)
	// pop blocks until a job is there, and reports false once the queue is
	// closed.
	pop() (*job, bool)
	// close wakes every pop and returns the jobs still queued.
	close() []*job
}

// New opens cfg.Root and returns a server ready to Serve.
func New(cfg Config) (*Server, error) {
	h, err := NewHandler(cfg)
	if err != nil {
		return nil, err
	}
	cfg = h.cfg
	s := &Server{
		h:     h,
		cfg:   cfg,
		log:   cfg.Logger,
		slots: make(chan struct{}, cfg.Buffers),
		done:  make(chan struct{}),
		start: time.Now(),
		conns: make(map[net.Conn]struct{}),
	}
	if cfg.Policy == SFF {
		if s.queue, err = newSFFQueue(); err != nil {
			h.Close()
			return nil, err
		}
	} else {
		s.queue = newFIFO(cfg.Buffers)
	}
	s.ctx, s.stop = context.WithCancel(context.Background())
	return s, nil
}

// Serve starts the workers and accepts connections on ln until Close. It
// returns lab.ErrServerClosed after Close (at once if Close came first), or
// the error that stopped Accept.
func (s *Server) Serve(ln net.Listener) error {
	if !s.begin(ln) {
		ln.Close()
		return lab.ErrServerClosed
	}
	defer s.wg.Done()
	s.log.Info("web server listening", "addr", ln.Addr(), "root", s.cfg.Root,
		"threads", s.cfg.Threads, "buffers", s.cfg.Buffers, "policy", s.cfg.Policy)
	for range s.cfg.Threads {
		s.wg.Go(s.work)
	}
	for {
		select {
		case s.slots <- struct{}{}: // blocks while the buffer is full
		case <-s.done:
			return lab.ErrServerClosed
		}
		conn, err := lab.Accept(ln, s.done, s.log) // retries EMFILE & co. with a backoff
		if err != nil {
			return err
		}
		if s.track(conn) {
			s.admit(conn)
		}
	}
}

// begin records ln so that Close can close it, and counts Serve in s.wg. It
// reports false if the server is closed already, or serves already (the
// Serve TODO's "a second one"): a second Serve that replaced ln would leave
// the first Accept blocked on a listener nobody closes.
func (s *Server) begin(ln net.Listener) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.ln != nil {
		return false // closed, or already serving: Close closes one listener
	}
	s.ln = ln
	s.wg.Add(1)
	return true
}

// admit puts a freshly accepted connection into the buffer, in the slot the
// master reserved for it. Under FIFO it goes in as it is. Under SFF the
// master must know the file's size first, so the request is read and the file
// opened before the job is pushed; that happens on a goroutine of its own,
// so that one slow client cannot stop the master from accepting others (the
// reserved slot still bounds how many are read at once).
func (s *Server) admit(conn net.Conn) {
	s.seq++
	j := &job{conn: conn, seq: s.seq}
	if s.cfg.Policy == FIFO {
		s.queue.push(j)
		s.cfg.Queued("")
		return
	}
	s.wg.Go(func() {
		s.h.read(j)
		j.key = s.sffKey(j)
		s.queue.push(j)
		s.cfg.Queued(j.uri)
	})
}

// work is a worker: it takes jobs out of the buffer and serves them, until
// the server closes. Serve runs it with s.wg.Go, which counts it in s.wg and
// marks it done only once work has returned: Close, waiting on s.wg, then
// never returns while a worker is still on its way out.
func (s *Server) work() {
	for {
		j, ok := s.queue.pop()
		if !ok {
			return
		}
		<-s.slots // the job has left the buffer
		if !j.read {
			s.h.read(j)
		}
		s.h.respond(s.ctx, j)
		s.untrack(j.conn)
	}
}

// track records conn so that Close can close it. It reports false, and
// closes conn, if the server is closed already.
func (s *Server) track(conn net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		conn.Close()
		return false
	}
	s.conns[conn] = struct{}{}
	return true
}

func (s *Server) untrack(conn net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, conn)
}

// Close stops the server: it closes the listener and every connection
// (queued, being read or being answered), kills running CGI programs, wakes
// the master and the workers, and waits for all of them. It is safe to call
// more than once, also from several goroutines at once: every call returns
// only when the server has stopped (sync.Once makes later calls wait for the
// first), and later calls return nil.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() { err = s.shutdown() })
	return err
}

// shutdown is the first Close.
func (s *Server) shutdown() error {
	s.mu.Lock()
	s.closed = true
	close(s.done) // before the listener: Accept then reports ErrServerClosed
	if s.ln != nil {
		s.ln.Close()
	}
	for conn := range s.conns {
		conn.Close()
	}
	s.mu.Unlock()

	s.stop()
	left := s.queue.close()
	s.wg.Wait()
	// Jobs pushed after close are still in the queue; their connections
	// are closed already, but their files are open.
	for _, j := range append(left, s.queue.close()...) {
		if j.target != nil {
			j.target.Close()
		}
	}
	return s.h.Close()
}

// fifo is the FIFO buffer: a channel as long as the buffer, so push never
// blocks while the master holds a slot.
type fifo struct {
	jobs chan *job
	done chan struct{}
	once sync.Once
}

func newFIFO(size int) *fifo {
	return &fifo{jobs: make(chan *job, size), done: make(chan struct{})}
}

// push adds j at the tail.
func (q *fifo) push(j *job) { q.jobs <- j }

// pop waits for the job at the head; it reports false once closed.
func (q *fifo) pop() (*job, bool) {
	select {
	case j := <-q.jobs:
		return j, true
	case <-q.done:
		return nil, false
	}
}

// close wakes every waiting worker and returns the jobs still queued.
func (q *fifo) close() []*job {
	q.once.Do(func() { close(q.done) })
	var left []*job
	for {
		select {
		case j := <-q.jobs:
			left = append(left, j)
		default:
			return left
		}
	}
}
