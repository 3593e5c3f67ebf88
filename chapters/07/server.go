package chatcore

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"serverlab/tools/chatcore/proto"
	"serverlab/tools/lab"
)

// Config configures a Server. The zero value of every field but DBPath (or
// Store) is a sensible default.
type Config struct {
	// DBPath is the SQLite database file (created if missing), used when
	// Store is nil.
	DBPath string
	// Store, if set, is used instead of opening DBPath. Close closes it.
	Store Store
	// MaxPending bounds the bytes of frames queued for one connection and
	// not yet written (default 4 MiB, at least one largest frame). A
	// connection whose queue would grow past it is not reading fast enough:
	// it is disconnected, and nobody waits for it.
	MaxPending int
	// LoginTimeout is how long a connection may stay unauthenticated, from
	// its start or its last logout (default 60 s).
	LoginTimeout time.Duration
	// IdleTimeout is how long a connection that has sent a heartbeat (type
	// 130) may stay silent, and how long any frame may take to arrive once
	// its first byte has (default 30 s).
	IdleTimeout time.Duration
	// KeepAlive is the TCP keep-alive idle time and probe interval (default
	// 15 s; four unanswered probes end the connection).
	KeepAlive time.Duration
	// WriteTimeout bounds one write to a client (default 10 s).
	WriteTimeout time.Duration
	// CommitWindow is how long the committer waits, after the first message
	// of a batch, for more to join it (default 0: a batch is what arrived
	// while the previous one was committing).
	CommitWindow time.Duration
	// MaxBatch bounds the messages of one transaction (default 512).
	MaxBatch int
	// ShutdownGrace is how long Close lets the writers flush the last frames
	// (default 2 s).
	ShutdownGrace time.Duration
	// Admins are the user names that may stop the server with Shutdown
	// (102). Nobody else may: the original let any logged-in user do it.
	Admins []string
	// Hash is the cost of the password hash (default DefaultHash).
	Hash HashParams
	// TLS, if set, makes every connection a TLS server connection.
	TLS *tls.Config
	// OnCommit, if set, is called after each committed batch with the
	// number of messages in it (a hook for tests and metrics).
	OnCommit func(messages int)
	// Logger receives the server's log (default slog.Default()).
	Logger *slog.Logger
}

// Defaults for Config.
const (
	DefaultMaxPending    = 4 << 20
	DefaultLoginTimeout  = 60 * time.Second
	DefaultIdleTimeout   = 30 * time.Second
	DefaultKeepAlive     = 15 * time.Second
	DefaultWriteTimeout  = 10 * time.Second
	DefaultMaxBatch      = 512
	DefaultShutdownGrace = 2 * time.Second
)

// Server is the chatcore server.
type Server struct {
	cfg    Config
	log    *slog.Logger
	store  Store
	admins map[string]bool

	// appends is the committer's queue (exercise 7.4).
	appends chan *appendRequest
	// hashSlots bounds the password hashes running at once: each takes
	// Hash.MemoryKiB of memory, and 450 clients logging in together must not
	// take 450 times that.
	hashSlots chan struct{}
	dummyState
	// logins remembers verified passwords for a while (see loginMemo).
	logins loginMemo

	// mu guards the fields below and the session and channel fields of
	// every conn. It is held to read or change them, and to push into
	// outboxes (which never blocks), never across a read, a write, a hash or
	// a database call.
	mu       sync.Mutex
	closed   bool
	ln       net.Listener
	conns    map[*conn]struct{}
	nextConn uint64
	users    map[string]*user // by name
	usersID  map[uint32]*user // by id
	sessions map[uint32]*conn // by user id: a user is logged in on one connection at most
	channels map[uint32]proto.Channel
	byName   map[string]uint32 // channel ids by name
	members  map[uint32]map[*conn]struct{}

	done      chan struct{} // closed when Close starts: stops accepting
	closing   atomic.Bool   // set when Close starts: readers stop
	closeOnce sync.Once
	readers   sync.WaitGroup // Serve and every reader goroutine
	writers   sync.WaitGroup // every writer goroutine
	committed chan struct{}  // closed when the committer returns; nil before Serve
}

// user is a registered user, cached from the store.
type user struct {
	id   uint32
	name string
	hash string
}

// New opens the store and loads users and channels. It starts no goroutine:
// Serve does.
func New(cfg Config) (*Server, error) {
	cfg = withDefaults(cfg)
	s := &Server{
		cfg:       cfg,
		log:       cfg.Logger,
		admins:    make(map[string]bool),
		appends:   make(chan *appendRequest, cfg.MaxBatch),
		hashSlots: make(chan struct{}, runtime.GOMAXPROCS(0)),
		conns:     make(map[*conn]struct{}),
		users:     make(map[string]*user),
		usersID:   make(map[uint32]*user),
		sessions:  make(map[uint32]*conn),
		channels:  make(map[uint32]proto.Channel),
		byName:    make(map[string]uint32),
		members:   make(map[uint32]map[*conn]struct{}),
		done:      make(chan struct{}),
	}
	for _, name := range cfg.Admins {
		s.admins[name] = true
	}
	store := cfg.Store
	if store == nil {
		var err error
		store, err = NewSQLiteStore(cfg.DBPath, s.hashPassword)
		if err != nil {
			return nil, err
		}
	}
	s.store = store
	if err := s.load(); err != nil {
		store.Close()
		return nil, err
	}
	return s, nil
}

func withDefaults(cfg Config) Config {
	if cfg.DBPath == "" {
		cfg.DBPath = "sqlite.db"
	}
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = DefaultMaxPending
	}
	// A limit below one largest frame would drop a client for one message.
	cfg.MaxPending = max(cfg.MaxPending, proto.HeaderSize+proto.MaxFrame)
	if cfg.LoginTimeout <= 0 {
		cfg.LoginTimeout = DefaultLoginTimeout
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = DefaultKeepAlive
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = DefaultMaxBatch
	}
	if cfg.ShutdownGrace <= 0 {
		cfg.ShutdownGrace = DefaultShutdownGrace
	}
	if cfg.Hash == (HashParams{}) {
		cfg.Hash = DefaultHash
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return cfg
}

// load fills the caches from the store.
func (s *Server) load() error {
	users, err := s.store.Users()
	if err != nil {
		return fmt.Errorf("load users: %w", err)
	}
	for _, u := range users {
		s.addUser(&user{id: u.ID, name: u.Name, hash: u.Hash})
	}
	chs, err := s.store.Channels()
	if err != nil {
		return fmt.Errorf("load channels: %w", err)
	}
	for _, ch := range chs {
		s.addChannel(ch)
	}
	return nil
}

// addUser and addChannel put one into the caches; the caller holds s.mu (or
// is New, before anyone else can see s).
func (s *Server) addUser(u *user) {
	s.users[u.name] = u
	s.usersID[u.id] = u
}

func (s *Server) addChannel(ch proto.Channel) {
	s.channels[ch.ID] = ch
	s.byName[ch.Name] = ch.ID
}

// Serve accepts connections on ln and serves each with a reader and a writer
// goroutine until Close (or an administrator's Shutdown). It always returns a
// non-nil error: lab.ErrServerClosed after Close.
func (s *Server) Serve(ln net.Listener) error {
	// TODO(ex 7.1): if !s.start(ln), close ln and return lab.ErrServerClosed.
	// Otherwise defer s.readers.Done(), log that you listen, and loop: take
	// the next connection with lab.Accept(ln, s.done, s.log) (it retries
	// EMFILE and friends); on lab.ErrServerClosed (or s.closing) return
	// lab.ErrServerClosed, on another error return it; else s.readers.Add(1)
	// and go s.handle(nc). Checked by TestEx7_1_Frames.
	return lab.NotImplemented("7.1", "Server.Serve")
}

// start records ln for Close, counts Serve among the readers and starts the
// committer. It reports false if the server is closed.
func (s *Server) start(ln net.Listener) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.committed != nil {
		return false // closed, or already serving
	}
	s.ln = ln
	s.readers.Add(1)
	s.committed = make(chan struct{})
	go s.commitLoop()
	return true
}

// handle is the reader goroutine of one connection: it sets the connection
// up, starts its writer, and reads and handles frames until the connection
// ends.
func (s *Server) handle(nc net.Conn) {
	defer s.readers.Done()
	s.keepAlive(nc)
	nc = s.wrapTLS(nc)
	c := s.track(nc)
	if c == nil {
		nc.Close() // accepted while Close was running
		return
	}
	s.writers.Add(1)
	go func() {
		defer s.writers.Done()
		c.writeLoop(s.cfg.WriteTimeout)
	}()
	err := s.readLoop(c)
	s.disconnect(c)
	c.log.Debug("connection ended", "why", err)
}

// wrapTLS makes nc a TLS server connection if the server speaks TLS. The
// handshake runs on the first read, in the connection's own goroutine and
// under its read deadline: a client that never completes it delays nobody.
// (tls.NewListener would do the same; wrapping here lets keepAlive see the
// *net.TCPConn first.)
func (s *Server) wrapTLS(nc net.Conn) net.Conn {
	// TODO(ex 7.1): if s.cfg.TLS is set, return tls.Server(nc, s.cfg.TLS).
	// Checked by TestEx7_1_Frames (tls).
	return nc
}

// track registers a new connection, or returns nil if the server is closed.
func (s *Server) track(nc net.Conn) *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.nextConn++
	c := &conn{
		id:      s.nextConn,
		nc:      nc,
		out:     newOutbox(s.cfg.MaxPending),
		log:     s.log.With("conn", s.nextConn, "remote", nc.RemoteAddr()),
		loginBy: time.Now().Add(s.cfg.LoginTimeout),
	}
	s.conns[c] = struct{}{}
	return c
}

// disconnect forgets a connection whose reader has ended: its session ends
// (everyone is told, 125) and it leaves its channel (nobody is told: the
// original sends no 127 here either). Then its outbox is finished: the writer
// sends what is queued and closes the socket. During Close the outbox stays
// open, because Close still sends the last messages and a notice.
func (s *Server) disconnect(c *conn) {
	s.mu.Lock()
	if !s.closed {
		delete(s.conns, c)
		s.endSession(c)
	}
	// Once Close has begun, a reader ends because Close interrupted it, and
	// its connection keeps its session and its channel until Close is done:
	// the committer's last batch is still to be delivered to every member,
	// before the notice (a message stored must be echoed).
	// Who finishes the outbox is decided here, under s.mu, because Close
	// takes its list of connections under s.mu too. If Close has not
	// started, c will not be on its list, so we finish the outbox. If it
	// has, c is on the list and Close finishes it after its notice. Reading
	// s.closing after Unlock instead would leave a gap: a connection that
	// left just before Close made its list would be finished by nobody, its
	// writer would wait for ever, and Close with it.
	closeHasIt := s.closed
	s.mu.Unlock()
	if !closeHasIt {
		c.out.finish()
	}
}

// errSlow is why a connection whose outbox overflowed was dropped.
var errSlow = errors.New("outbox full: the client does not read fast enough")

// send queues the encoded frame b for c. It never blocks. If c's outbox is
// full, c is dropped (see Config.MaxPending): its queued frames are
// discarded and its socket closed, which ends its reader.
func (s *Server) send(c *conn, b []byte) {
	if err := c.out.push(b); errors.Is(err, errFull) {
		s.drop(c)
	}
}

// drop disconnects a client that does not read fast enough: it closes the
// outbox, which discards what is queued and stops the writer, and the socket,
// which ends the reader (and so the session: everyone gets a 125). It may be
// called with s.mu held, and more than once; it logs once.
func (s *Server) drop(c *conn) {
	// TODO(ex 7.5): close c.out (log a warning if this call closed it) and
	// close c.nc. Checked by TestEx7_5_BackPressure.
}

// reply encodes m and sends it to c.
func (s *Server) reply(c *conn, m proto.Message) {
	b, err := proto.Encode(m)
	if err != nil {
		c.log.Error("cannot encode a reply", "type", m.Type(), "err", err)
		return
	}
	s.send(c, b)
}

// broadcastLocked sends m to every connection in to. The caller holds s.mu,
// so that every receiver sees events in the same order.
func (s *Server) broadcastLocked(to map[*conn]struct{}, m proto.Message) {
	b, err := proto.Encode(m)
	if err != nil {
		s.log.Error("cannot encode a broadcast", "type", m.Type(), "err", err)
		return
	}
	for c := range to {
		s.send(c, b)
	}
}
