package chat

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"serverlab/tools/given/users"
	"serverlab/tools/given/wire"
)

// Config configures a Server.
type Config struct {
	// UsersPath is the users file that the discovery server of chapter 01
	// writes (default "users.txt"). It is read once, and then only what the
	// discovery server appends to it (users.Cache), so users registered while
	// the chat server runs can log in.
	UsersPath string
	// MaxPending bounds the bytes of frames queued for one client and not yet
	// written to its socket (default 1 MiB; at least one frame of the largest
	// size). A frame for a client whose queue is full waits, and so does its
	// sender (see StallTimeout).
	MaxPending int
	// StallTimeout is how long a frame waits for room in a full queue
	// (default 2s). A client whose queue stays full that long has read
	// nothing meanwhile: it is not reading, and is disconnected. A client
	// that reads, however slowly, slows down the clients that send to it.
	StallTimeout time.Duration
	// LoginTimeout bounds the time from connecting to a complete LOGIN frame
	// (default 10s): a connection that says nothing must not hold a goroutine
	// and a file descriptor for ever.
	LoginTimeout time.Duration
	// Logger receives the server's log (default slog.Default()).
	Logger *slog.Logger
}

// Defaults for Config.
const (
	DefaultMaxPending   = 1 << 20
	DefaultStallTimeout = 2 * time.Second
	DefaultLoginTimeout = 10 * time.Second
)

// Server is the goroutine-per-client chat server.
type Server struct {
	cfg   Config
	log   *slog.Logger
	users *users.Cache  // users.txt in memory
	done  chan struct{} // closed by Close: stops lab.Accept's retries

	// mu guards the fields below. It is held to look at or change them, and
	// never while writing to a socket: one slow client would stall everyone
	// who needs the lock.
	mu     sync.Mutex
	closed bool
	ln     net.Listener
	conns  map[net.Conn]struct{} // every open connection, logged in or not: Close closes them
	online map[string]*client    // logged-in clients by name

	// wg counts Serve and every goroutine it starts, so Close can wait for
	// all of them. Serve holds a count while it runs, so the counter is never
	// zero while a connection goroutine is being added.
	wg sync.WaitGroup
}

// New returns a server ready to Serve. The users file need not exist yet.
// New starts nothing: a server that is never served leaves nothing running.
func New(cfg Config) (*Server, error) {
	if cfg.UsersPath == "" {
		cfg.UsersPath = "users.txt"
	}
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = DefaultMaxPending
	}
	if cfg.MaxPending < wire.HeaderSize+wire.MaxPayload {
		// A limit below one frame would disconnect a client for a single
		// large message, however fast it reads.
		cfg.MaxPending = wire.HeaderSize + wire.MaxPayload
	}
	if cfg.StallTimeout <= 0 {
		cfg.StallTimeout = DefaultStallTimeout
	}
	if cfg.LoginTimeout <= 0 {
		cfg.LoginTimeout = DefaultLoginTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Server{
		cfg:    cfg,
		log:    cfg.Logger,
		users:  users.NewCache(cfg.UsersPath, cfg.Logger),
		done:   make(chan struct{}),
		conns:  make(map[net.Conn]struct{}),
		online: make(map[string]*client),
	}, nil
}

// Serve accepts connections on ln and serves each in its own goroutine until
// Close. It always returns a non-nil error: lab.ErrServerClosed after Close.
func (s *Server) Serve(ln net.Listener) error {
	// TODO(ex 2.1): Done when: a Serve after Close (or a second one) closes ln
	// and returns lab.ErrServerClosed; Serve stays counted in s.wg (start
	// counted it) until it returns; every connection runs handle on a goroutine
	// of its own, counted in s.wg before that goroutine starts (so that Close
	// never waits for too few); accept errors that pass never end Serve
	// (lab.Accept retries them); after Close Serve returns lab.ErrServerClosed,
	// and any other accept error as it is. Checked by TestEx2_1_Login.
	return notImplemented("2.1", "Server.Serve")
}

// start records ln so that Close can close it, and counts Serve in s.wg. It
// reports false if the server is closed already, or serves already: it keeps
// one listener for Close, and a second Serve that replaced it would leave the
// first Accept blocked on a listener nobody closes.
func (s *Server) start(ln net.Listener) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.ln != nil {
		return false // closed, or already serving
	}
	s.ln = ln
	s.wg.Add(1)
	return true
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// handle is the reader goroutine of one connection: it logs the client in,
// starts its writer, and reads its frames until the connection ends.
func (s *Server) handle(conn net.Conn) {
	defer s.wg.Done()
	if !s.track(conn) {
		conn.Close() // accepted while Close was running
		return
	}
	defer s.untrack(conn)

	log := s.log.With("remote", conn.RemoteAddr())
	c, err := s.login(conn)
	if err != nil {
		log.Info("login failed", "err", err)
		return
	}
	defer s.leave(c)
	log = log.With("user", c.name)
	log.Info("logged in")

	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		c.writeLoop()
	}()

	err = s.readLoop(c)
	switch {
	case errors.Is(err, io.EOF):
		// The client closed its side. It may still be reading: let the
		// writer send what is queued for it (replies to its last
		// requests), for up to StallTimeout, before the connection closes.
		s.goOffline(c)
		c.conn.SetWriteDeadline(time.Now().Add(s.cfg.StallTimeout))
		c.out.finish()
		<-c.written
		log.Info("left")
	case errors.Is(err, net.ErrClosed):
		log.Info("left")
	default:
		log.Info("disconnected", "err", err)
	}
}

// track records an open connection so that Close can close it. It reports
// false if the server is closed.
func (s *Server) track(conn net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[conn] = struct{}{}
	return true
}

// untrack forgets a connection and closes it.
func (s *Server) untrack(conn net.Conn) {
	s.mu.Lock()
	delete(s.conns, conn)
	s.mu.Unlock()
	conn.Close()
}

// errProtocol is the reason for closing a connection that sent a frame the
// server does not accept after login.
var errProtocol = errors.New("unexpected frame type")

// readLoop reads the client's frames and acts on them until the connection
// ends or the client breaks the protocol.
func (s *Server) readLoop(c *client) error {
	for {
		f, err := wire.ReadFrame(c.conn)
		if err != nil {
			return err
		}
		switch f.Type {
		case wire.Broadcast:
			s.broadcast(c, f)
		case wire.PrivateMsg:
			s.private(c, f)
		case wire.QueryUser:
			s.queryUsers(c)
		case wire.StatusUpdate:
			// Reserved by the protocol: accepted and ignored.
		default:
			// A second LOGIN, a REGISTRATION or an unknown type.
			return fmt.Errorf("%w: %v", errProtocol, f.Type)
		}
	}
}

// send queues the encoded frame b for c. If c's outbox is full, it waits
// (Config.StallTimeout at most) for c's writer to make room: so the client
// that sent the frame is slowed down to the pace of its receivers. A
// receiver that has taken nothing for the whole stall timeout is not reading,
// and is dropped.
func (s *Server) send(c *client, b []byte) {
	if !c.out.push(b, s.cfg.StallTimeout) {
		s.drop(c, "outbox full: not reading")
	}
}

// drop disconnects a client that cannot keep up: it closes the outbox (which
// frees what was queued and stops the writer) and the connection (which makes
// the client's reader fail, and its goroutine clean up).
func (s *Server) drop(c *client, why string) {
	// TODO(ex 2.5): Done when: c's outbox is closed (its queue discarded, its
	// writer stopped) and its connection closed; only the call that closed the
	// outbox logs the warning, with the user and why, so that a client dropped
	// twice is logged once. Checked by TestEx2_5_Isolation.
}

// Close stops the server: it closes the listener and every connection, and
// waits for Serve and every goroutine it started to return. It is safe to call
// more than once, also from two goroutines at once: every call waits until
// everything has stopped.
func (s *Server) Close() error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.done)
		if s.ln != nil {
			s.ln.Close()
		}
	}
	s.mu.Unlock()

	s.closeConns()
	s.wg.Wait()
	return nil
}

// closeConns closes every open connection, so that the goroutines blocked
// reading or writing them return.
func (s *Server) closeConns() {
	// TODO(ex 2.6): Done when: every connection in s.conns is closed, under
	// s.mu (closing does not block, and holding the lock keeps track from
	// adding one half-way through). Checked by TestEx2_6_Shutdown.
}
