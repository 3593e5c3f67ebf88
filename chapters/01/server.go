package discovery

import (
	"log/slog"
	"net"
	"sync"
	"time"

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
	// TODO(ex 1.4): Done when: a Serve after Close, or while another Serve
	// serves (Close closes one listener), closes ln and returns
	// lab.ErrServerClosed; otherwise ln is recorded for Close, under s.mu, and
	// Serve counted in s.serve until it returns; connections are served one at
	// a time, each to its end before the next accept (an iterative server);
	// accept errors that pass never end Serve (lab.Accept retries them); after
	// Close Serve returns lab.ErrServerClosed, and any other accept error as it
	// is. Checked by TestEx1_4_Serve.
	return notImplemented("1.4", "Server.Serve")
}

// handle serves one connection: one request, one answer, close.
//
// A REGISTRATION frame is answered with a REGISTRATION frame from
// wire.ServerName to the user, with payload replyOK or replyFail; anything
// else (another type, a malformed frame, end of stream) closes the connection
// without an answer.
func (s *Server) handle(conn net.Conn) {
	// TODO(ex 1.4): Done when: one request is read, checked (its type),
	// registered in the store from the client's name, password and address, and
	// answered with one frame; the connection is recorded in s.conn under s.mu
	// while it is served (so that Close can reach it) and forgotten after; it
	// is closed whatever happens, and its end is logged at Debug.
	// TODO(ex 1.5): Done when: a client cannot hold the server: the whole
	// request (not each read) must arrive within Timeout of its start, and the
	// answer's write gets a deadline of its own. Checked by
	// TestEx1_5_Deadlines.
	s.log.Error("handle is not implemented yet (ex 1.4)", "remote", conn.RemoteAddr())
	conn.Close()
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
	// TODO(ex 1.4): Done when: the first Close marks the server closed, under
	// s.mu, closes s.done and the listener Serve has, and every Close, a second
	// or a concurrent one too, returns only once Serve has stopped (s.serve)
	// and the store is closed, once; the first call returns the store's error,
	// later ones nil.
	// TODO(ex 1.6): Done when: the first Close also closes the connection being
	// served, so that a client in the middle of a request cannot keep Close
	// waiting. Checked by TestEx1_6_Close.
	return notImplemented("1.4", "Server.Close")
}
