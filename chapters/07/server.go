package chatcore

import (
	"cmp"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"serverlab/tools/given/chatcore/guard"
	"serverlab/tools/given/chatcore/proto"
)

// Config configures a Server. The zero value of every field but DBPath (or
// Store) is a sensible default. What the server allows its clients is in
// Limits; what tests and metrics may watch is in Hooks.
type Config struct {
	// DBPath is the SQLite database file (created if missing), used when
	// Store is nil.
	DBPath string
	// Store, if set, is used instead of opening DBPath. Close closes it.
	Store Store
	// Admins are the user names that may stop the server with Shutdown
	// (102). Nobody else may: the original let any logged-in user do it. A
	// name counts only if its account was in the database when the server
	// started (created by the operator: chatcore-server -add-user), so that
	// registering a name, which anyone may do, never grants the right.
	Admins []string
	// Hash is the cost of the password hash (default DefaultHash).
	Hash HashParams
	// TLS, if set, makes every connection a TLS server connection.
	TLS *tls.Config
	// Logger receives the server's log (default slog.Default()).
	Logger *slog.Logger

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
	// ShutdownGrace is how long Close lets the writers flush the last frames
	// (default 2 s).
	ShutdownGrace time.Duration
	// CommitWindow is how long the committer waits, after the first message
	// of a batch, for more to join it (default 0: a batch is what arrived
	// while the previous one was committing).
	CommitWindow time.Duration
	// MaxBatch bounds the messages of one transaction (default 512).
	MaxBatch int

	// Limits bound what clients may make the server hold, store or compute.
	Limits Limits
	// Hooks are called at points that tests and metrics watch.
	Hooks Hooks
}

// Limits bound what one connection, one client address or everyone
// together may make the server hold, store or compute (docs/chatcore.md,
// "Limits", has the figures). The zero value of each is its default.
type Limits struct {
	// MaxPending bounds the bytes of frames queued for one connection and
	// not yet written (default 4 MiB, at least one largest frame). A
	// connection whose queue would grow past it is not reading fast enough:
	// it is disconnected, and nobody waits for it.
	MaxPending int
	// MaxConnections bounds the open connections (default 4096, a common
	// file-descriptor limit less room for the database and the listener); a
	// connection past it is told Server busy. and closed.
	MaxConnections int
	// MaxConnsPerAddress bounds the open connections from one client IP
	// address (default 512, an eighth of the default MaxConnections), as an
	// IRC daemon's connection class does; one past it is told Too many
	// connections from your address. and closed. Near MaxConnections the
	// cap shrinks, so that a few addresses cannot fill the server between
	// them (see guard.Gate).
	MaxConnsPerAddress int
	// PreAuthBudget bounds the bytes of frames over 64 KiB that
	// unauthenticated connections may be reading at once, together (default
	// 64 MiB); one that does not fit is told Server busy. and closed.
	// InputBudget bounds the same for every connection, logged in or not
	// (default 256 MiB): registering is free, so logging in is no reason to
	// be trusted with memory.
	PreAuthBudget int
	InputBudget   int
	// OutputBudget bounds the bytes of frames queued for every connection
	// together, not yet written (default 128 MiB): MaxPending alone let 600
	// clients that asked for history and read nothing hold 1.2 GiB. A large
	// reply (over 64 KiB: history, a long list) may use only its first half
	// and is answered Server busy. past it; what cannot be refused (chat
	// messages, events, small replies) has the rest, and a connection whose
	// frame finds no room even there is dropped as a slow client.
	OutputBudget int
	// HistoryReads bounds the GetChats being read from the store at once
	// (default 8); one past it is answered Server busy. at once, so that a
	// burst of history requests cannot take the store and the CPU from
	// logins and chat messages.
	HistoryReads int
	// PresenceBurst and PresenceRate are each connection's budget of
	// presence events (126, 125, 128, 127): at most PresenceBurst at once,
	// refilled at PresenceRate a second (defaults 100 and 20). An event past
	// the budget is not sent to that connection; events about its own
	// session always are (see broadcastPresenceLocked).
	PresenceBurst int
	PresenceRate  int
	// ChatBurst and ChatRate are each user's budget of chat bytes (the
	// contents of its WriteChats): ChatBurst at once, refilled at ChatRate
	// a second (defaults 1 MiB and 64 KiB: 64 and 4 of the longest
	// messages, MaxMessage, if that is more); a message past it is refused
	// 101 Too many messages, try again later. (guard.ChatBudget).
	ChatBurst int
	ChatRate  int
	// MaxIdle is how long any connection may stay silent, heartbeat or not
	// (default 30 min): a client that says nothing for that long holds a
	// file descriptor and a session for nobody.
	MaxIdle time.Duration
	// MaxUserName and MaxChannelName bound a name, in bytes (defaults 32
	// and 64). Names are also checked for what they may hold (validName).
	MaxUserName    int
	MaxChannelName int
	// MaxMessage bounds a chat message's content, in bytes (default 16 KiB).
	// Whatever it is set to, a message whose JSON would not fit alone in a
	// GetChats reply is refused.
	MaxMessage int
	// MaxChannels bounds the channels of the server (default 4096: their
	// list always fits in one frame), MaxChannelsPerUser the channels one
	// user may create while the server runs (default 64), and
	// MaxChannelsPerAddress those the users of one client address may
	// create (default an eighth of MaxChannels, at least eight users'
	// worth), with the last eighth of MaxChannels kept for addresses that
	// made few (see guard.Shares): users are free to register, so a cap per
	// user alone let one address make every channel.
	MaxChannels           int
	MaxChannelsPerUser    int
	MaxChannelsPerAddress int
	// MaxStoreBytes bounds the store (default 1 GiB, as chapter 08's
	// stream): its size at start and the messages stored since; once it is
	// reached a chat message is refused Message not stored. (see
	// storeBudget).
	MaxStoreBytes int
	// MaxUserIDs bounds the ids of one GetUsers request (default 1000, as
	// many as a full history has authors).
	MaxUserIDs int
	// HashWait is the longest the first hash of an address's line may wait
	// for its turn (default 1 minute; see guard.FairQueue): the cores go
	// round-robin by address, so it is past only when the server cannot hash
	// once for every address waiting in that time, and then that address's
	// line is answered Server busy. HashQueue bounds the hashes waiting in
	// count (default 4096, as many as the connections: each waits for one
	// hash at most); one address's line is bounded by MaxConnsPerAddress.
	HashWait  time.Duration
	HashQueue int
	// AddressRegistrations is how many users one client address may
	// register at once, refilled evenly over RegistrationWindow (defaults
	// 512, an address's connections, per hour); past it a registration is
	// refused without a hash (see registrationLimiter).
	AddressRegistrations int
	RegistrationWindow   time.Duration
	// MaxLoginFailures is how many failed logins close a connection
	// (default 5); AddressFailures how many failed logins one client address
	// may have per FailureWindow (defaults 20 per minute) before its logins
	// are refused without a hash.
	MaxLoginFailures int
	AddressFailures  int
	FailureWindow    time.Duration
}

// DefaultMaxStoreBytes is Limits.MaxStoreBytes's default: 1 GiB, as
// chapter 08's stream.
const DefaultMaxStoreBytes = 1 << 30

// Hooks are functions the server calls at points that tests and metrics
// watch; each may be nil.
type Hooks struct {
	// OnCommit is called after each committed batch with the number of
	// messages in it.
	OnCommit func(messages int)
}

// Defaults for Config.
const (
	DefaultDBPath        = "sqlite.db"
	DefaultLoginTimeout  = 60 * time.Second
	DefaultIdleTimeout   = 30 * time.Second
	DefaultKeepAlive     = 15 * time.Second
	DefaultWriteTimeout  = 10 * time.Second
	DefaultShutdownGrace = 2 * time.Second
	DefaultMaxBatch      = 512
)

// Defaults for Limits.
const (
	DefaultMaxPending         = 4 << 20
	DefaultMaxConnections     = 4096
	DefaultMaxConnsPerAddr    = 512
	DefaultPreAuthBudget      = 64 << 20
	DefaultInputBudget        = 256 << 20
	DefaultPresenceBurst      = 100
	DefaultPresenceRate       = 20
	DefaultChatBurst          = 1 << 20
	DefaultChatRate           = 64 << 10
	DefaultMaxIdle            = 30 * time.Minute
	DefaultMaxUserName        = 32
	DefaultMaxChannelName     = 64
	DefaultMaxMessage         = 16 << 10
	DefaultMaxChannels        = 4096
	DefaultMaxChannelsPerUser = 64
	DefaultMaxUserIDs         = 1000

	DefaultHashWait             = time.Minute
	DefaultHashQueue            = DefaultMaxConnections
	DefaultAddressRegistrations = DefaultMaxConnsPerAddr
	DefaultRegistrationWindow   = time.Hour
	DefaultMaxLoginFailures     = 5
	DefaultAddressFailures      = 20
	DefaultFailureWindow        = time.Minute
)

// Defaults for the output limits: 128 MiB holds 32 clients' full
// MaxPending, and its half for large replies 64 histories of 1 MiB; 8
// history reads keep two cores busy and leave room for logins and chat.
const (
	DefaultOutputBudget = 128 << 20
	DefaultHistoryReads = 8
)

// Server is the chatcore server.
type Server struct {
	cfg    Config
	log    *slog.Logger
	store  Store
	admins map[string]bool

	// appends is the committer's queue (exercise 7.4).
	appends chan *appendRequest
	// turns is the hash queue: whose password hash runs next, round-robin
	// by client address (guard.FairQueue); hashes the cores they run on.
	// storeBudget is what the chat messages may make the store hold
	// (Limits.MaxStoreBytes); s.store counts them into it.
	storeBudget *storeBudget
	turns       *guard.FairQueue
	hashes      cores
	// failures counts failed logins per client address, registrations
	// registrations.
	failures      *guard.Failures
	registrations registrationLimiter
	// chat is every user's budget of chat bytes (Limits.ChatBurst).
	chat *guard.ChatBudget
	// gate counts the open connections, in all and by client address;
	// channelShares the channels created, by client address.
	gate          *guard.Gate
	channelShares *guard.Shares
	// preAuthInput and input are the budgets of large frames being read
	// (see admitInput).
	preAuthInput, input *guard.Budget
	// output is the budget of bytes queued for clients, all outboxes
	// together; historyReads the GetChats reading the store (see
	// historyGate).
	output       *guard.Budget
	historyReads *guard.Reads
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
	chanList []proto.Channel   // every channel, by ascending id
	created  map[uint32]int    // channels created by each user since the start, and being created
	creating int               // channels being created: counted against MaxChannels (createChannel)
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
	done := make(chan struct{})
	s := &Server{
		cfg:     cfg,
		log:     cfg.Logger,
		admins:  make(map[string]bool),
		appends: make(chan *appendRequest, cfg.MaxBatch),
		turns: guard.NewFairQueue(runtime.GOMAXPROCS(0), cfg.Limits.MaxConnsPerAddress, cfg.Limits.HashQueue,
			cfg.Limits.HashWait, done),
		hashes:   cores{slots: make(chan struct{}, runtime.GOMAXPROCS(0)), done: done},
		failures: guard.NewFailures(cfg.Limits.AddressFailures, cfg.Limits.FailureWindow),
		chat:     guard.NewChatBudget(cfg.Limits.ChatBurst, cfg.Limits.ChatRate),
		registrations: registrationLimiter{
			buckets: guard.NewFailures(cfg.Limits.AddressRegistrations, cfg.Limits.RegistrationWindow)},
		gate:          guard.NewGate(cfg.Limits.MaxConnections, cfg.Limits.MaxConnsPerAddress),
		channelShares: guard.NewShares(cfg.Limits.MaxChannels, cfg.Limits.MaxChannelsPerAddress),
		conns:         make(map[*conn]struct{}),
		users:         make(map[string]*user),
		usersID:       make(map[uint32]*user),
		sessions:      make(map[uint32]*conn),
		channels:      make(map[uint32]proto.Channel),
		byName:        make(map[string]uint32),
		created:       make(map[uint32]int),
		members:       make(map[uint32]map[*conn]struct{}),
		done:          done,

		preAuthInput: guard.NewBudget(cfg.Limits.PreAuthBudget),
		input:        guard.NewBudget(cfg.Limits.InputBudget),
		output:       guard.NewBudget(cfg.Limits.OutputBudget),
	}
	s.historyReads = guard.NewReads(cfg.Limits.HistoryReads, s.output)
	store := cfg.Store
	if store == nil {
		var err error
		store, err = NewSQLiteStore(cfg.DBPath, s.hashPassword)
		if err != nil {
			return nil, err
		}
	}
	s.storeBudget = &storeBudget{limit: int64(cfg.Limits.MaxStoreBytes)}
	if sized, ok := store.(SizedStore); ok {
		n, err := sized.Size()
		if err != nil {
			store.Close()
			return nil, err
		}
		s.storeBudget.used.Store(n)
	}
	s.store = meteredStore{Store: store, budget: s.storeBudget}
	if err := s.load(); err != nil {
		store.Close()
		return nil, err
	}
	s.grantAdmins(cfg.Admins)
	return s, nil
}

// withDefaults fills every zero field of cfg with its default.
func withDefaults(cfg Config) Config {
	cfg.DBPath = cmp.Or(cfg.DBPath, DefaultDBPath)
	cfg.Hash = cmp.Or(cfg.Hash, DefaultHash)
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	orDefault(&cfg.LoginTimeout, DefaultLoginTimeout)
	orDefault(&cfg.IdleTimeout, DefaultIdleTimeout)
	orDefault(&cfg.KeepAlive, DefaultKeepAlive)
	orDefault(&cfg.WriteTimeout, DefaultWriteTimeout)
	orDefault(&cfg.ShutdownGrace, DefaultShutdownGrace)
	orDefault(&cfg.MaxBatch, DefaultMaxBatch)
	cfg.Limits = cfg.Limits.withDefaults()
	return cfg
}

// withDefaults fills every zero limit with its default.
func (l Limits) withDefaults() Limits {
	orDefault(&l.MaxPending, DefaultMaxPending)
	// A limit below one largest frame would drop a client for one message.
	l.MaxPending = max(l.MaxPending, proto.HeaderSize+proto.MaxFrame)
	orDefault(&l.MaxConnections, DefaultMaxConnections)
	orDefault(&l.MaxConnsPerAddress, DefaultMaxConnsPerAddr)
	orDefault(&l.PreAuthBudget, DefaultPreAuthBudget)
	orDefault(&l.InputBudget, DefaultInputBudget)
	orDefault(&l.OutputBudget, DefaultOutputBudget)
	orDefault(&l.HistoryReads, DefaultHistoryReads)
	orDefault(&l.PresenceBurst, DefaultPresenceBurst)
	orDefault(&l.PresenceRate, DefaultPresenceRate)
	orDefault(&l.MaxIdle, DefaultMaxIdle)
	orDefault(&l.MaxUserName, DefaultMaxUserName)
	orDefault(&l.MaxChannelName, DefaultMaxChannelName)
	orDefault(&l.MaxMessage, DefaultMaxMessage)
	// 64 of the longest messages at once, 4 a second, when MaxMessage is
	// raised past the default: a user may still paste 64 of them.
	orDefault(&l.ChatBurst, max(DefaultChatBurst, 64*l.MaxMessage))
	orDefault(&l.ChatRate, max(DefaultChatRate, 4*l.MaxMessage))
	orDefault(&l.MaxChannels, DefaultMaxChannels)
	orDefault(&l.MaxChannelsPerUser, DefaultMaxChannelsPerUser)
	orDefault(&l.MaxChannelsPerAddress, max(l.MaxChannels/8, 8*l.MaxChannelsPerUser))
	orDefault(&l.MaxStoreBytes, DefaultMaxStoreBytes)
	orDefault(&l.MaxUserIDs, DefaultMaxUserIDs)
	orDefault(&l.HashWait, DefaultHashWait)
	orDefault(&l.HashQueue, DefaultHashQueue)
	orDefault(&l.AddressRegistrations, DefaultAddressRegistrations)
	orDefault(&l.RegistrationWindow, DefaultRegistrationWindow)
	orDefault(&l.MaxLoginFailures, DefaultMaxLoginFailures)
	orDefault(&l.AddressFailures, DefaultAddressFailures)
	orDefault(&l.FailureWindow, DefaultFailureWindow)
	return l
}

// orDefault sets *v to def if it is not positive: zero means "the
// default", and a negative limit would mean nothing.
func orDefault[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
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
	if _, ok := s.channels[ch.ID]; ok {
		return
	}
	s.channels[ch.ID] = ch
	s.byName[ch.Name] = ch.ID
	// Ids mostly come in ascending order, so this is nearly always an append.
	i, _ := slices.BinarySearchFunc(s.chanList, ch.ID, func(c proto.Channel, id uint32) int { return cmp.Compare(c.ID, id) })
	s.chanList = slices.Insert(s.chanList, i, ch)
}

// Serve accepts connections on ln and serves each with a reader and a writer
// goroutine until Close (or an administrator's Shutdown). It always returns a
// non-nil error: lab.ErrServerClosed after Close.
func (s *Server) Serve(ln net.Listener) error {
	// TODO(ex 7.1): Done when: Serve serves until Close and then returns
	// lab.ErrServerClosed, never another error of Close's making; a second
	// Serve, or one after Close, closes its listener and returns
	// lab.ErrServerClosed at once (start says which); every accepted connection
	// runs handle on a goroutine of its own, counted in s.readers before it
	// starts, so that Close can wait for every reader; Serve itself stays
	// counted in s.readers (start counted it) until it returns; an accept error
	// that says the process is out of file descriptors never ends Serve (wait
	// and retry, as lab.Accept does); another accept error is returned. Checked
	// by TestEx7_1_Frames.
	return notImplemented("7.1", "Server.Serve")
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
	c, err := s.track(nc)
	if errors.Is(err, guard.ErrServerFull) || errors.Is(err, guard.ErrTooManyFromAddr) {
		s.refuse(nc, err)
		return
	}
	if c == nil {
		nc.Close() // accepted while Close was running
		return
	}
	s.writers.Add(1)
	readerDone := make(chan struct{})
	go func() {
		defer s.writers.Done()
		s.endConn(c, c.writeLoop(s.cfg.WriteTimeout), readerDone)
	}()
	err = s.readLoop(c)
	close(readerDone)
	s.disconnect(c)
	c.log.Debug("connection ended", "why", err)
}

// wrapTLS makes nc a TLS server connection if the server speaks TLS. The
// handshake runs on the first read, in the connection's own goroutine and
// under its read deadline: a client that never completes it delays nobody.
// (tls.NewListener would do the same; wrapping here lets keepAlive see the
// *net.TCPConn first.)
func (s *Server) wrapTLS(nc net.Conn) net.Conn {
	// TODO(ex 7.1): Done when: with Config.TLS set, every connection speaks
	// TLS, its handshake done on its first read (in its own goroutine, under
	// its read deadline); without it the connection is returned as it is.
	// Checked by TestEx7_1_Frames (tls).
	return nc
}

// track registers a new connection, or returns nil if the server is closed
// (and guard.ErrServerFull or guard.ErrTooManyFromAddr if the gate refuses
// it). The per-address cap is an IRC daemon's connection class: one host,
// or one attacker, cannot take every connection the server has; and near
// the global cap it shrinks, so that nine hosts cannot either (guard.Gate).
func (s *Server) track(nc net.Conn) (*conn, error) {
	addr := guard.Host(nc)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil
	}
	if err := s.gate.Admit(addr); err != nil {
		return nil, err
	}
	s.nextConn++
	c := &conn{
		id:      s.nextConn,
		nc:      nc,
		out:     newOutbox(s.cfg.Limits.MaxPending, s.output),
		log:     s.log.With("conn", s.nextConn, "remote", nc.RemoteAddr()),
		loginBy: time.Now().Add(s.cfg.LoginTimeout),
		addr:    addr,
	}
	s.conns[c] = struct{}{}
	return c, nil
}

// refuse tells a connection past a cap why (101) and closes it, as NATS
// answers -ERR 'maximum connections exceeded': past MaxConnections "Server
// busy.", past MaxConnsPerAddress "Too many connections from your address.".
// The client learns why, and nothing of it is kept. The write has a short
// deadline, in this connection's own goroutine.
func (s *Server) refuse(nc net.Conn, why error) {
	defer nc.Close()
	text, limit := proto.MsgServerBusy, s.cfg.Limits.MaxConnections
	if errors.Is(why, guard.ErrTooManyFromAddr) {
		text, limit = proto.MsgTooManyFromAddr, s.cfg.Limits.MaxConnsPerAddress
	}
	s.log.Warn("connection refused", "why", why, "remote", nc.RemoteAddr(), "limit", limit)
	b, _ := proto.Encode(proto.Error{Value: text})
	nc.SetWriteDeadline(time.Now().Add(time.Second))
	if _, err := nc.Write(b); err == nil {
		guard.Linger(nc, nil) // the client may have sent a first request: see endConn
	}
}

// disconnect forgets a connection whose reader has ended: its session ends
// (everyone is told, 125) and it leaves its channel (nobody is told: the
// original sends no 127 here either). Then its outbox is finished: the writer
// sends what is queued and closes the socket. During Close the outbox stays
// open, because Close still sends the last messages and a notice.
func (s *Server) disconnect(c *conn) {
	s.releaseInput(c)
	s.mu.Lock()
	if !s.closed {
		delete(s.conns, c)
		s.gate.Leave(c.addr)
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

// send queues the encoded frame b for c. It never blocks. The frame draws
// on the server's output budget (Config.Limits.OutputBudget) until its
// writer has written it or the outbox discards it. If c's outbox is full
// (Config.Limits.MaxPending), or the budget has no room for b, c is
// dropped: its queued frames are discarded and its socket closed, which
// ends its reader.
func (s *Server) send(c *conn, b []byte) {
	if !s.output.Take(int64(len(b))) {
		if !c.out.stopped() {
			c.log.Warn("no output budget for a frame", "bytes", len(b), "limit", s.cfg.Limits.OutputBudget)
			s.drop(c)
		}
		return
	}
	s.queue(c, b)
}

// queue pushes b, whose bytes the caller has taken from s.output, into c's
// outbox; a frame the outbox refuses gives them back at once.
func (s *Server) queue(c *conn, b []byte) {
	err := c.out.push(b)
	if err != nil {
		s.output.Give(int64(len(b)))
	}
	if errors.Is(err, errFull) {
		s.drop(c)
	}
}

// drop disconnects a client that does not read fast enough: it closes the
// outbox, which discards what is queued and stops the writer, and the socket,
// which ends the reader (and so the session: everyone gets a 125). It may be
// called with s.mu held, and more than once; it logs once.
func (s *Server) drop(c *conn) {
	// TODO(ex 7.5): Done when: c's outbox is closed (what it held discarded,
	// its writer stopped) and its socket closed (its reader ends, and so its
	// session: everyone gets a 125); a second drop of the same client changes
	// nothing and the warning is logged once; nothing here blocks (s.mu may be
	// held). Checked by TestEx7_5_BackPressure.
}

// reply encodes m and sends it to c. A reply that cannot be encoded — it
// would pass the 1 MiB frame, which the client would drop — is answered with
// Reply too large. (100 with the request's id, or 101), never with silence:
// the original sent such frames anyway, and its clients dropped the
// connection.
func (s *Server) reply(c *conn, m proto.Message) {
	b, err := proto.Encode(m)
	if err != nil {
		c.log.Error("cannot encode a reply", "type", m.Type(), "err", err)
		if r, ok := m.(proto.Requester); ok {
			b, err = proto.Encode(proto.ErrorResponse{RequestID: r.Request(), Value: proto.MsgReplyTooLarge})
		} else {
			b, err = proto.Encode(proto.Error{Value: proto.MsgReplyTooLarge})
		}
		if err != nil {
			return // cannot happen: both are a few bytes
		}
	}
	if len(b) > smallFrame {
		s.sendLarge(c, m, b)
		return
	}
	s.send(c, b)
}

// sendLarge queues a reply over smallFrame (a history, a long list) if the
// half of the output budget that large replies may use has room for it
// (guard.Budget.TakeOptional), and otherwise answers Server busy.: an
// overloaded server says so, and the client may ask again. 600 clients that
// each asked for 6 MiB of history and read nothing held 1.2 GiB, and an
// honest client's echo took 6.6 s.
func (s *Server) sendLarge(c *conn, m proto.Message, b []byte) {
	if !s.output.TakeOptional(int64(len(b))) {
		c.log.Warn("large reply over the output budget", "type", m.Type(), "bytes", len(b),
			"limit", s.cfg.Limits.OutputBudget)
		s.busy(c, m)
		return
	}
	s.queue(c, b)
}

// busy answers m Server busy.: 100 with its request id, 101 if it has none.
func (s *Server) busy(c *conn, m proto.Message) {
	if r, ok := m.(proto.Requester); ok {
		s.reply(c, proto.ErrorResponse{RequestID: r.Request(), Value: proto.MsgServerBusy})
		return
	}
	s.reply(c, proto.Error{Value: proto.MsgServerBusy})
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
