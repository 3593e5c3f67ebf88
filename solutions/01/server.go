package discovery

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"serverlab/tools/lab"
	"serverlab/tools/users"
	"serverlab/tools/wire"
)

// Config configures a Server.
type Config struct {
	// UsersPath is the users file (default "users.txt").
	UsersPath string
	// Timeout bounds the whole exchange with one client: reading its request
	// and writing the answer (default 5s). An iterative server serves one
	// client at a time, so without it one silent client stops the server.
	Timeout time.Duration
	// Logger receives the server's log (default slog.Default()).
	Logger *slog.Logger
}

// Replies to a registration.
const (
	replyOK   = "OK"
	replyFail = "FAIL"
)

// Server is the iterative discovery server.
type Server struct {
	cfg   Config
	store *Store
	log   *slog.Logger

	mu     sync.Mutex
	closed bool
	ln     net.Listener // the listener Serve is using, if any
	conn   net.Conn     // the connection being served, if any
	serve  sync.WaitGroup
}

// New opens the user store and returns a server ready to Serve.
func New(cfg Config) (*Server, error) {
	if cfg.UsersPath == "" {
		cfg.UsersPath = "users.txt"
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	store, err := OpenStore(cfg.UsersPath)
	if err != nil {
		return nil, err
	}
	return &Server{cfg: cfg, store: store, log: cfg.Logger}, nil
}

// Serve accepts connections on ln and serves them one at a time until Close.
// It always returns a non-nil error: lab.ErrServerClosed after Close.
func (s *Server) Serve(ln net.Listener) error {
	if !s.start(ln) {
		ln.Close()
		return lab.ErrServerClosed
	}
	defer s.serve.Done()
	s.log.Info("discovery server listening", "addr", ln.Addr())
	for {
		conn, err := ln.Accept()
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
// server is already closed.
func (s *Server) start(ln net.Listener) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
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
func (s *Server) handle(conn net.Conn) {
	defer conn.Close()
	if !s.setConn(conn) {
		return
	}
	defer s.setConn(nil)

	// One deadline for the whole exchange: a client that sends one byte a
	// second cannot extend it, as it could a per-Read deadline.
	conn.SetDeadline(time.Now().Add(s.cfg.Timeout))

	log := s.log.With("remote", conn.RemoteAddr())
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
// than once; later calls return nil.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	if s.ln != nil {
		s.ln.Close()
	}
	if s.conn != nil {
		s.conn.Close()
	}
	s.mu.Unlock()

	s.serve.Wait()
	return s.store.Close()
}
