package discovery

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"serverlab/tools/given/lab"
	"serverlab/tools/given/users"
	"serverlab/tools/given/wire"
)

// Config configures a Server.
type Config struct {
	// UsersPath is the users file (default "users.txt").
	UsersPath string
	// Timeout bounds each phase of the exchange with one client: reading its
	// whole request, and then writing the answer (default DefaultTimeout, at
	// most MaxTimeout). An iterative server serves one client at a time, so
	// a silent client delays every other by up to Timeout, and N silent
	// clients by up to N × Timeout.
	Timeout time.Duration
	// Logger receives the server's log (default slog.Default()).
	Logger *slog.Logger
	// OpenUsers opens the users file for appending (default
	// users.OpenAppend): the store's StoreOptions.Open. Tests pass one whose
	// syncs are slow, to see that a slow disk does not cost a client its
	// answer.
	OpenUsers func(path string) (users.AppendFile, error)
}

// Bounds of Config.Timeout. A registration is two small frames: a client
// that needs more than a second or two for it is broken or hostile, and the
// limit is what it costs everyone behind it.
const (
	DefaultTimeout = 2 * time.Second
	MaxTimeout     = 10 * time.Second
)

// Replies to a registration.
const (
	replyOK   = wire.ReplyOK
	replyFail = wire.ReplyFail
)

// Server is the iterative discovery server.
type Server struct {
	cfg   Config
	store *Store
	log   *slog.Logger
	done  chan struct{} // closed by Close: stops lab.Accept's retries

	// mu guards the fields below it. Close runs in another goroutine than
	// Serve, so everything both of them touch needs the lock.
	mu     sync.Mutex
	closed bool           // Close has been called
	ln     net.Listener   // the listener Serve is using, if any
	conn   net.Conn       // the connection being served, if any
	serve  sync.WaitGroup // counts the running Serve call, so Close can wait for it

	closeStore sync.Once // the store is closed once, and every Close waits for it
	storeErr   error
}

// New opens the user store and returns a server ready to Serve. It starts
// nothing: a server that is never served leaves nothing running.
func New(cfg Config) (*Server, error) {
	if cfg.UsersPath == "" {
		cfg.UsersPath = "users.txt"
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	cfg.Timeout = min(cfg.Timeout, MaxTimeout)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	store, err := OpenStore(cfg.UsersPath, StoreOptions{Logger: cfg.Logger, Open: cfg.OpenUsers})
	if err != nil {
		return nil, err
	}
	return &Server{cfg: cfg, store: store, log: cfg.Logger, done: make(chan struct{})}, nil
}

// Serve accepts connections on ln and serves them one at a time until Close.
// It always returns a non-nil error: lab.ErrServerClosed after Close (and at
// once if Close was called before Serve).
func (s *Server) Serve(ln net.Listener) error {
	if !s.start(ln) {
		ln.Close()
		return lab.ErrServerClosed
	}
	defer s.serve.Done()
	s.log.Info("discovery server listening", "addr", ln.Addr())
	for {
		// lab.Accept waits and retries when the process is out of file
		// descriptors (EMFILE) instead of ending Serve.
		conn, err := lab.Accept(ln, s.done, s.log)
		if err != nil {
			if s.isClosed() {
				return lab.ErrServerClosed
			}
			return err
		}
		s.handle(conn)
	}
}

// start records ln so that Close can close it. It reports false if the
// server is already closed, or serves already: it keeps one listener for
// Close, and a second Serve that replaced it would leave the first Accept
// blocked on a listener nobody closes.
func (s *Server) start(ln net.Listener) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.ln != nil {
		return false // closed, or already serving
	}
	s.ln = ln
	s.serve.Add(1)
	return true
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// setConn records the connection being served, so that Close can close it.
// It reports false if the server is closed already.
func (s *Server) setConn(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conn = c
	return !s.closed
}

// handle serves one connection: one request, one answer, close.
//
// A REGISTRATION frame is answered with a REGISTRATION frame from
// wire.ServerName to the user, with payload replyOK or replyFail; anything
// else (another type, a malformed frame, end of stream) closes the connection
// without an answer.
func (s *Server) handle(conn net.Conn) {
	log := s.log.With("remote", conn.RemoteAddr())
	defer log.Debug("connection closed")
	defer conn.Close()
	if !s.setConn(conn) {
		return
	}
	defer s.setConn(nil)

	// One deadline for the whole request: a client that sends one byte a
	// second cannot extend it, as it could a per-Read deadline.
	conn.SetDeadline(time.Now().Add(s.cfg.Timeout))
	req, err := ReadFrame(conn)
	if err != nil {
		if !errors.Is(err, io.EOF) {
			log.Warn("bad request", "err", err)
		}
		return
	}
	if req.Type != wire.Registration {
		log.Warn("unexpected frame type; closing", "type", req.Type)
		return
	}
	answer := replyOK
	if err := s.store.Register(userFrom(req, conn.RemoteAddr())); err != nil {
		log.Info("registration refused", "user", req.Sender, "err", err)
		answer = replyFail
	} else {
		log.Info("registered", "user", req.Sender)
	}
	// A deadline of its own for the answer: the fsync before it may have
	// taken a while, and a client that does not read gets Timeout, no more.
	conn.SetWriteDeadline(time.Now().Add(s.cfg.Timeout))
	reply := wire.Frame{Type: wire.Registration, Sender: wire.ServerName, Target: req.Sender, Payload: []byte(answer)}
	if err := WriteFrame(conn, reply); err != nil {
		log.Warn("writing reply", "err", err)
	}
}

// userFrom builds the user a REGISTRATION frame asks for: the name is the
// sender, the payload the password, and the address the one it came from.
func userFrom(req wire.Frame, from net.Addr) users.User {
	u := users.User{Name: req.Sender, Password: string(req.Payload)}
	if tcp, ok := from.(*net.TCPAddr); ok {
		u.IP, u.Port = tcp.IP.String(), tcp.Port
	}
	return u
}

// Close stops the server: it closes the listener (which makes Accept return),
// closes the connection being served (which makes its Read or Write return),
// waits for Serve to finish, and closes the store. It is safe to call more
// than once, also from two goroutines at once: every call waits until the
// server has stopped; later calls return nil.
func (s *Server) Close() error {
	s.mu.Lock()
	first := !s.closed
	if first {
		s.closed = true
		close(s.done)
		if s.ln != nil {
			s.ln.Close()
		}
		if s.conn != nil {
			s.conn.Close()
		}
	}
	s.mu.Unlock()

	s.serve.Wait()
	s.closeStore.Do(func() { s.storeErr = s.store.Close() })
	if first {
		return s.storeErr
	}
	return nil
}
