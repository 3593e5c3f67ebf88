package chatscale

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	nats "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"serverlab/tools/given/chatcore/guard"
	"serverlab/tools/given/chatcore/proto"
	"serverlab/tools/given/lab"
)

// Config configures a Server. The zero value of every field is a sensible
// default: one server, with its own embedded NATS.
type Config struct {
	// DBPath names the server's data as chapter 07's did (default
	// "chatcore.db"); the embedded NATS keeps its store in the folder
	// DBPath + ".nats" beside it. Unused with NATSURL.
	DBPath string
	// NATSURL, if set, joins an existing NATS (cluster) instead of
	// embedding one: a comma-separated list of nats:// URLs.
	NATSURL string
	// Cluster, if set, makes the embedded NATS a node of a cluster.
	Cluster *ClusterConfig
	// Replicas is how many copies of the stream and of each bucket the
	// cluster keeps (default 1; 3 on a 3-node cluster). A message is
	// acknowledged once a majority of them has it.
	Replicas int
	// PublishTimeout bounds how long a chat message may wait for the
	// stream's acknowledgement, retries included (default 5 s); then the
	// sender is told Message not stored.
	PublishTimeout time.Duration
	// RequestTimeout bounds every other NATS call of a request (default
	// 5 s); then the client is told Storage failed.
	RequestTimeout time.Duration
	// SessionTTL is how long a session's key outlives its server (default
	// 30 s): a server refreshes its sessions' keys every SessionTTL/3, so
	// when it dies its users may log in elsewhere after at most SessionTTL.
	SessionTTL time.Duration
	// MaxStreamBytes is the budget of every channel's history together
	// (default 1 GiB): once the stream holds that much, a new message is
	// refused (Message not stored.) until room is made. JetStream sets
	// it aside when the stream is made, so it must fit in NATS's store
	// beside the buckets.
	MaxStreamBytes int64
	// MaxChannelMessages is how many messages one channel keeps (default
	// 1,000,000): its oldest go to make room for its newest.
	MaxChannelMessages int64
	// HashIterations is the cost of the password hash (default
	// DefaultHashIterations).
	HashIterations int
	// WriteTimeout bounds one write to a client (default 10 s).
	WriteTimeout time.Duration
	// LoginTimeout is how long a connection may stay unauthenticated
	// (default 60 s); IdleTimeout how long one that has sent a heartbeat
	// may stay silent, and how long a started frame may take (default 30 s).
	// Both as chapter 07's.
	LoginTimeout time.Duration
	IdleTimeout  time.Duration
	// Logger receives the server's log (default slog.Default()).
	Logger *slog.Logger

	// Limits bound what clients may make the server hold or compute.
	Limits Limits
}

// Limits bound what one connection, one client address or everyone
// together may make the server hold or compute, as chapter 07's
// (docs/chatcore.md, "Limits", gives each default and why). The zero value
// of each is its default.
type Limits struct {
	// MaxPending bounds the BYTES of frames queued for one connection
	// (default 4 MiB, at least one largest frame); a connection whose queue
	// would pass it is dropped.
	MaxPending int
	// MaxMessage bounds a chat message's content, in bytes (default 16 KiB).
	MaxMessage int
	// PresenceBurst and PresenceRate are each connection's budget of
	// presence events (126, 125, 128, 127), as in chapter 07: at most
	// PresenceBurst at once, refilled at PresenceRate a second (defaults
	// 100 and 20). An event past it is not sent to that connection; events
	// about its own session always are (see deliverLocked).
	PresenceBurst int
	PresenceRate  int
	// ChatBurst and ChatRate are each user's budget of chat bytes (the
	// contents of its WriteChats): ChatBurst at once, refilled at ChatRate
	// a second (defaults 1 MiB and 64 KiB: 64 and 4 of the longest
	// messages, MaxMessage, if that is more); a message past it is refused
	// 101 Too many messages, try again later. (guard.ChatBudget).
	ChatBurst int
	ChatRate  int
	// HashWait is the longest the first hash of an address's line may wait
	// for its turn (default 1 minute): the cores go round-robin by address
	// (guard.FairQueue), and past it that line is answered Server busy.
	// HashQueue bounds the hashes waiting in count (default 4096); one
	// address's line is bounded by MaxConnsPerAddress.
	HashWait  time.Duration
	HashQueue int
	// AddressRegistrations is how many users one client address may
	// register at once, refilled evenly over RegistrationWindow (defaults
	// 512 per hour); past it a registration is refused without a hash.
	AddressRegistrations int
	RegistrationWindow   time.Duration
	// MaxIdle is how long any connection may stay silent (default 30 min).
	// MaxConnections and MaxConnsPerAddress bound the open connections, in
	// all and from one address (4096 and 512, see guard.Gate);
	// PreAuthBudget and InputBudget the bytes of large frames being read at
	// once by connections not logged in, and by all (64 and 256 MiB, see
	// guard.Budget); MaxChannels and MaxChannelsPerUser the channels, and
	// those one user may create on this server while it runs (4096 and 64);
	// MaxLoginFailures the failed logins that close a connection (5), and
	// AddressFailures per FailureWindow those of one address before its
	// logins are refused without a hash (20 a minute).
	MaxIdle            time.Duration
	MaxConnections     int
	MaxConnsPerAddress int
	PreAuthBudget      int
	InputBudget        int
	// OutputBudget bounds the bytes queued for every connection together
	// (128 MiB; a large reply, over 64 KiB, may use half of it and is
	// answered Server busy. past it); HistoryReads the GetChats read from
	// the stream at once (8; one past it is answered Server busy.). As in
	// chapter 07: MaxPending alone let 600 clients that asked for history
	// and read nothing hold 520 MiB.
	OutputBudget       int
	HistoryReads       int
	MaxChannels        int
	MaxChannelsPerUser int
	// MaxChannelsPerAddress bounds the channels the users of one client
	// address may create on this server (default an eighth of MaxChannels,
	// at least 8 users' worth; the last eighth is kept for addresses that
	// made few: guard.Shares).
	MaxChannelsPerAddress int
	MaxLoginFailures      int
	AddressFailures       int
	FailureWindow         time.Duration
}

// ClusterConfig makes the embedded NATS a node of a cluster.
type ClusterConfig struct {
	// Name is the cluster's name, the same on every node (default "chat").
	Name string
	// NodeName names this node, unique in the cluster.
	NodeName string
	// Listen is the host:port where this node accepts the other nodes'
	// routes.
	Listen string
	// Routes are the other nodes' route addresses (host:port).
	Routes []string
	// ClientListen is the host:port where this node accepts NATS clients
	// (the servers that join with NATSURL); default 127.0.0.1 and a port
	// the kernel chooses. (nats-server starts a node's routes only once its
	// client port listens, so a cluster node always has one.)
	ClientListen string
}

// Defaults for Config.
const (
	DefaultDBPath         = "chatcore.db"
	DefaultPublishTimeout = 5 * time.Second
	DefaultRequestTimeout = 5 * time.Second
	DefaultSessionTTL     = 30 * time.Second
	DefaultWriteTimeout   = 10 * time.Second
	DefaultShutdownGrace  = 2 * time.Second

	DefaultLoginTimeout = 60 * time.Second
	DefaultIdleTimeout  = 30 * time.Second

	DefaultMaxStreamBytes     = 1 << 30
	DefaultMaxChannelMessages = 1_000_000
)

// Defaults for Limits.
const (
	DefaultMaxPending           = 4 << 20
	DefaultMaxMessage           = 16 << 10
	DefaultPresenceBurst        = 100
	DefaultPresenceRate         = 20
	DefaultChatBurst            = 1 << 20
	DefaultChatRate             = 64 << 10
	DefaultHashWait             = time.Minute
	DefaultHashQueue            = 4096
	DefaultAddressRegistrations = 512
	DefaultRegistrationWindow   = time.Hour
	DefaultMaxIdle              = 30 * time.Minute
	DefaultMaxConnections       = 4096
	DefaultMaxConnsPerAddr      = 512
	DefaultPreAuthBudget        = 64 << 20
	DefaultInputBudget          = 256 << 20
	DefaultMaxChannels          = 4096
	DefaultMaxChannelsPerUser   = 64
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

// Server is one chatcore server of the cluster.
type Server struct {
	cfg  Config
	log  *slog.Logger
	node string // this run's id in message ids and event headers

	// store is the lock on DBPath; its owner id is the value of this
	// server's session keys, the same from one run to the next.
	store *storeLock

	nats *natsLink

	// The limits shared with chapter 07 (tools/given/chatcore/guard).
	gate                *guard.Gate
	channelShares       *guard.Shares // channels created here, by client address (see reserveChannel)
	preAuthInput, input *guard.Budget
	failures            *guard.Failures
	chat                *guard.ChatBudget // every user's budget of chat bytes (Limits.ChatBurst)
	// output is the budget of bytes queued for clients, every outbox
	// together; historyReads the GetChats reading the stream (historyGate).
	output       *guard.Budget
	historyReads *guard.Reads

	// hwm is the high-water mark: the highest stream sequence delivered to
	// this server's connections (exercise 8.2). Only the consumer's
	// goroutine touches it.
	hwm uint64

	// mu guards the fields below and the session and channel fields of
	// every conn. It is never held across I/O or a NATS call.
	mu sync.Mutex
	// keys is held by the session keeper while it refreshes the session
	// keys (Lock), and by whoever releases the key of a session that has
	// ended (RLock): see releaseEndedSession.
	keys     sync.RWMutex
	closed   bool
	serving  bool
	ln       net.Listener
	conns    map[*conn]struct{}
	nextConn uint64
	sessions map[uint32]*conn  // the users logged in on this server
	leases   map[uint32]uint64 // the revision of each one's session key
	members  map[uint32]map[*conn]struct{}
	users    map[uint32]proto.User    // cached: users never change
	channels map[uint32]proto.Channel // every channel, fed by a watcher
	byName   map[string]uint32
	created  map[uint32]int // channels created on this server by each user, and being created
	reserved int            // channels being created (see reserveChannel)
	creating chan struct{}  // holds a token while this server creates a channel (see createChannel)

	channelWatch jetstream.KeyWatcher // made by loadChannels, read by watchChannels
	rewatch      chan struct{}        // tells watchChannels to read the bucket anew (see forgetUsers)

	seq       atomic.Uint64 // numbers this server's message ids
	ctx       context.Context
	cancel    context.CancelFunc
	closeOnce sync.Once
	closing   atomic.Bool
	readers   sync.WaitGroup // Serve and every reader
	writers   sync.WaitGroup // every writer
	workers   sync.WaitGroup // the consumer, the watcher, the session keeper, the events

	// admission decides which password hashes run (admission.go).
	admission admission
}

// New connects to NATS (embedding it unless cfg.NATSURL is set), makes the
// stream and buckets if they are missing, and starts the goroutines that
// follow them. Close stops them.
func New(cfg Config) (*Server, error) {
	cfg = withDefaults(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		cfg:      cfg,
		log:      cfg.Logger,
		node:     nuid.Next(),
		conns:    make(map[*conn]struct{}),
		sessions: make(map[uint32]*conn),
		leases:   make(map[uint32]uint64),
		members:  make(map[uint32]map[*conn]struct{}),
		users:    make(map[uint32]proto.User),
		channels: make(map[uint32]proto.Channel),
		byName:   make(map[string]uint32),
		created:  make(map[uint32]int),
		creating: make(chan struct{}, 1),
		rewatch:  make(chan struct{}, 1),
		ctx:      ctx,
		cancel:   cancel,

		gate:          guard.NewGate(cfg.Limits.MaxConnections, cfg.Limits.MaxConnsPerAddress),
		channelShares: guard.NewShares(cfg.Limits.MaxChannels, cfg.Limits.MaxChannelsPerAddress),
		preAuthInput:  guard.NewBudget(cfg.Limits.PreAuthBudget),
		input:         guard.NewBudget(cfg.Limits.InputBudget),
		output:        guard.NewBudget(cfg.Limits.OutputBudget),
		failures:      guard.NewFailures(cfg.Limits.AddressFailures, cfg.Limits.FailureWindow),
		chat:          guard.NewChatBudget(cfg.Limits.ChatBurst, cfg.Limits.ChatRate),
	}
	s.historyReads = guard.NewReads(cfg.Limits.HistoryReads, s.output)
	lock, err := lockStore(cfg.DBPath)
	if err != nil {
		cancel()
		return nil, err
	}
	s.store = lock
	link, err := openNATS(ctx, cfg, s.log)
	if err != nil {
		cancel()
		lock.release()
		return nil, err
	}
	s.nats = link
	if err := s.startFollowing(); err != nil {
		s.stopWorkers()
		return nil, err
	}
	return s, nil
}

// withDefaults fills every zero field of cfg with its default.
func withDefaults(cfg Config) Config {
	cfg.DBPath = cmp.Or(cfg.DBPath, DefaultDBPath)
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	cfg.Replicas = max(cfg.Replicas, 1)
	orDefault(&cfg.PublishTimeout, DefaultPublishTimeout)
	orDefault(&cfg.RequestTimeout, DefaultRequestTimeout)
	orDefault(&cfg.SessionTTL, DefaultSessionTTL)
	orDefault(&cfg.HashIterations, DefaultHashIterations)
	orDefault(&cfg.WriteTimeout, DefaultWriteTimeout)
	orDefault(&cfg.LoginTimeout, DefaultLoginTimeout)
	orDefault(&cfg.IdleTimeout, DefaultIdleTimeout)
	orDefault(&cfg.MaxStreamBytes, DefaultMaxStreamBytes)
	orDefault(&cfg.MaxChannelMessages, DefaultMaxChannelMessages)
	cfg.Limits = cfg.Limits.withDefaults()
	return cfg
}

// withDefaults fills every zero limit with its default.
func (l Limits) withDefaults() Limits {
	orDefault(&l.MaxPending, DefaultMaxPending)
	// A bound below one largest frame would drop a client for one reply.
	l.MaxPending = max(l.MaxPending, proto.HeaderSize+proto.MaxFrame)
	orDefault(&l.MaxMessage, DefaultMaxMessage)
	// 64 of the longest messages at once, 4 a second, when MaxMessage is
	// raised past the default: a user may still paste 64 of them.
	orDefault(&l.ChatBurst, max(DefaultChatBurst, 64*l.MaxMessage))
	orDefault(&l.ChatRate, max(DefaultChatRate, 4*l.MaxMessage))
	orDefault(&l.PresenceBurst, DefaultPresenceBurst)
	orDefault(&l.PresenceRate, DefaultPresenceRate)
	orDefault(&l.MaxIdle, DefaultMaxIdle)
	orDefault(&l.MaxConnections, DefaultMaxConnections)
	orDefault(&l.MaxConnsPerAddress, DefaultMaxConnsPerAddr)
	orDefault(&l.PreAuthBudget, DefaultPreAuthBudget)
	orDefault(&l.InputBudget, DefaultInputBudget)
	orDefault(&l.OutputBudget, DefaultOutputBudget)
	orDefault(&l.HistoryReads, DefaultHistoryReads)
	orDefault(&l.MaxChannels, DefaultMaxChannels)
	orDefault(&l.MaxChannelsPerUser, DefaultMaxChannelsPerUser)
	orDefault(&l.MaxChannelsPerAddress, max(l.MaxChannels/8, 8*l.MaxChannelsPerUser))
	orDefault(&l.MaxLoginFailures, DefaultMaxLoginFailures)
	orDefault(&l.AddressFailures, DefaultAddressFailures)
	orDefault(&l.FailureWindow, DefaultFailureWindow)
	orDefault(&l.HashWait, DefaultHashWait)
	orDefault(&l.HashQueue, DefaultHashQueue)
	orDefault(&l.AddressRegistrations, DefaultAddressRegistrations)
	orDefault(&l.RegistrationWindow, DefaultRegistrationWindow)
	return l
}

// orDefault sets *v to def if it is not positive: zero means "the
// default", and a negative limit would mean nothing.
func orDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// startFollowing starts the goroutines that follow the shared state: the
// stream's consumer, the channel bucket's watcher, the events and the
// session keeper.
func (s *Server) startFollowing() error {
	start, err := s.nats.lastSeq(s.ctx)
	if err != nil {
		return fmt.Errorf("read the stream: %w", err)
	}
	s.hwm = start // what is in the stream already is history, not news
	if err := s.clearOldSessions(); err != nil {
		return err
	}
	if err := s.loadChannels(); err != nil {
		return err
	}
	if err := s.subscribeEvents(); err != nil {
		return err
	}
	s.goWork(func() { s.consume(start + 1) })
	s.goWork(s.watchChannels)
	s.goWork(s.keepSessions)
	s.goWork(s.keepBound)
	return nil
}

// goWork runs f in a goroutine that Close waits for.
func (s *Server) goWork(f func()) {
	s.workers.Add(1)
	go func() {
		defer s.workers.Done()
		f()
	}()
}

// Serve accepts connections on ln until Close. It always returns a non-nil
// error: lab.ErrServerClosed after Close.
func (s *Server) Serve(ln net.Listener) error {
	if !s.start(ln) {
		ln.Close()
		return lab.ErrServerClosed
	}
	defer s.readers.Done()
	done := s.ctx.Done()
	s.log.Info("chatscale listening", "addr", ln.Addr(), "node", s.node)
	for {
		nc, err := lab.Accept(ln, done, s.log)
		if err != nil {
			if errors.Is(err, lab.ErrServerClosed) || s.closing.Load() {
				return lab.ErrServerClosed
			}
			return err
		}
		s.readers.Add(1)
		go s.handle(nc)
	}
}

// start records ln for Close and counts Serve among the readers. It reports
// false if the server is closed or serving already.
func (s *Server) start(ln net.Listener) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.serving {
		return false
	}
	s.serving = true
	s.ln = ln
	s.readers.Add(1)
	return true
}

// Close stops accepting, ends every connection (each is told Server
// shutting down.), releases this server's sessions, stops following NATS,
// and returns when every goroutine is done. It is idempotent.
func (s *Server) Close() error {
	s.closeOnce.Do(s.close)
	return nil
}

func (s *Server) close() {
	s.closing.Store(true)
	s.admit().stop() // a reader waiting for a hash must not hold Close up
	s.mu.Lock()
	s.closed = true
	ln := s.ln
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	if ln != nil {
		ln.Close()
	}
	bye, _ := proto.Encode(proto.Error{Value: proto.MsgShuttingDown})
	for _, c := range conns {
		c.out.push(bye)
		c.out.finish()
		c.nc.SetReadDeadline(time.Now()) // ends the reader
	}
	s.readers.Wait()
	force := time.AfterFunc(DefaultShutdownGrace, func() {
		for _, c := range conns {
			c.nc.Close()
		}
	})
	s.writers.Wait()
	force.Stop()
	s.stopWorkers()
}

// stopWorkers cancels the followers, waits for them and closes the NATS
// link (and the embedded NATS, if any).
func (s *Server) stopWorkers() {
	s.cancel()
	s.nats.stopSubscriptions()
	s.workers.Wait()
	s.nats.close()
	s.store.release()
}

// handle is the reader goroutine of one connection.
func (s *Server) handle(nc net.Conn) {
	defer s.readers.Done()
	c, err := s.track(nc)
	if err != nil {
		s.refuse(nc, err)
		return
	}
	if c == nil {
		nc.Close()
		return
	}
	s.writers.Add(1)
	readerDone := make(chan struct{})
	go func() {
		defer s.writers.Done()
		s.endConn(c, c.out.writeLoop(nc, s.cfg.WriteTimeout), readerDone)
	}()
	err = s.readLoop(c)
	close(readerDone)
	s.disconnect(c)
	c.log.Debug("connection ended", "why", err)
}

// track registers a new connection, or returns nil if the server is closed
// (and an error if the gate refuses it: the server, or the client's
// address, has all the connections it may have; see guard.Gate).
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
		addr:    addr,
		loginBy: time.Now().Add(s.cfg.LoginTimeout),
	}
	s.conns[c] = struct{}{}
	return c, nil
}

// refuse tells a connection past a cap why (101: Server busy., or Too many
// connections from your address.) and closes it, in its own goroutine,
// with a short deadline.
func (s *Server) refuse(nc net.Conn, why error) {
	defer nc.Close()
	text := proto.MsgServerBusy
	if errors.Is(why, guard.ErrTooManyFromAddr) {
		text = proto.MsgTooManyFromAddr
	}
	s.log.Warn("connection refused", "why", why, "remote", nc.RemoteAddr())
	b, _ := proto.Encode(proto.Error{Value: text})
	nc.SetWriteDeadline(time.Now().Add(time.Second))
	if _, err := nc.Write(b); err == nil {
		guard.Linger(nc, nil) // the client may have sent a first request: see endConn
	}
}

// disconnect forgets a connection whose reader has ended: its session ends
// (everyone is told, 125, and its key is released) and it leaves its
// channel. During Close, Close finishes its outbox after the notice.
func (s *Server) disconnect(c *conn) {
	s.releaseInput(c)
	s.mu.Lock()
	closing := s.closed
	if _, ok := s.conns[c]; ok {
		delete(s.conns, c)
		s.gate.Leave(c.addr)
	}
	ended := s.endSessionLocked(c)
	s.mu.Unlock()
	s.publishEvent(ended.event)
	s.releaseEndedSession(ended.user, ended.lease)
	if !closing {
		c.out.finish()
	}
}

// send queues the encoded frame b for c; a connection whose queue would
// pass MaxPending bytes is dropped (its socket closed, which ends its
// reader): nobody waits for a client that does not read, and what it has
// not read cannot grow past the bound. The frame draws on the server's
// output budget until it is written or discarded; a connection whose frame
// finds no room there is dropped too.
func (s *Server) send(c *conn, b []byte) {
	if !s.output.Take(int64(len(b))) {
		if !c.out.stopped() {
			c.log.Warn("dropping a client: no output budget for a frame", "bytes", len(b),
				"limit", s.cfg.Limits.OutputBudget)
		}
		c.nc.Close()
		return
	}
	if !c.out.push(b) {
		c.log.Warn("dropping slow client", "limit bytes", s.cfg.Limits.MaxPending)
		c.nc.Close()
	}
}

// sendLarge queues a reply over smallFrame (a history, a long list) if the
// half of the output budget that large replies may use has room for it
// (guard.Budget.TakeOptional), and otherwise answers Server busy., as
// chapter 07 does: 600 clients that asked for 6 MiB of history each and
// read nothing held 520 MiB.
func (s *Server) sendLarge(c *conn, m proto.Message, b []byte) {
	if !s.output.TakeOptional(int64(len(b))) {
		c.log.Warn("large reply over the output budget", "type", m.Type(), "bytes", len(b),
			"limit", s.cfg.Limits.OutputBudget)
		s.busy(c, m)
		return
	}
	if !c.out.push(b) {
		c.log.Warn("dropping slow client", "limit bytes", s.cfg.Limits.MaxPending)
		c.nc.Close()
	}
}

// busy answers m Server busy.: 100 with its request id, 101 if it has none.
func (s *Server) busy(c *conn, m proto.Message) {
	if r, ok := m.(proto.Requester); ok {
		s.reply(c, proto.ErrorResponse{RequestID: r.Request(), Value: proto.MsgServerBusy})
		return
	}
	s.reply(c, proto.Error{Value: proto.MsgServerBusy})
}

// reply encodes m and sends it to c. A reply that cannot be encoded — it
// would pass the 1 MiB frame — is answered Reply too large., never with
// silence (as in chapter 07).
func (s *Server) reply(c *conn, m proto.Message) {
	b, err := proto.Encode(m)
	if err != nil {
		c.log.Error("cannot encode a reply", "type", m.Type(), "err", err)
		if r, ok := m.(proto.Requester); ok {
			b, _ = proto.Encode(proto.ErrorResponse{RequestID: r.Request(), Value: proto.MsgReplyTooLarge})
		} else {
			b, _ = proto.Encode(proto.Error{Value: proto.MsgReplyTooLarge})
		}
	}
	if len(b) > smallFrame {
		s.sendLarge(c, m, b)
		return
	}
	s.send(c, b)
}

// broadcastLocked sends the frame b to every connection in to. The caller
// holds s.mu, so that every receiver sees events in the same order.
func (s *Server) broadcastLocked(to map[*conn]struct{}, b []byte) {
	for c := range to {
		s.send(c, b)
	}
}

// requestContext bounds one NATS call of a request.
func (s *Server) requestContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(s.ctx, s.cfg.RequestTimeout)
}

// natsDown reports whether err says that NATS or its stream did not
// answer (as opposed to an answer we can act on).
func natsDown(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) ||
		errors.Is(err, nats.ErrConnectionClosed) || errors.Is(err, nats.ErrDisconnected) ||
		errors.Is(err, nats.ErrReconnectBufExceeded) // NATS is away (see openNATS)
}

// keepBound is the goroutine that makes the stream and the buckets again
// when they may be gone: after NATS came back (maybe on an empty store), or
// when a request found one missing. Until then each request that needs one
// is answered Storage failed.; after, the server works on without a
// restart (what the wipe took is lost, and said so by streamRemade).
func (s *Server) keepBound() {
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.nats.rebinds:
		}
		if err := s.nats.remake(s.ctx, s.dropSessions); err != nil && s.ctx.Err() == nil {
			s.log.Warn("making the stream and the buckets again", "err", err)
		}
	}
}

// dropSessions ends every session on this server: the users bucket is
// not the one this server knew (NATS lost its store, see checkUsers), and
// every account went with the old one. Kept, a session would speak under
// its user id, which the new bucket hands to the next user who registers:
// the first user to register after the wipe was told that they were
// "already logged in", and an old session's messages carried a new user's
// name. Each session ends at once, under s.mu, with no logout event (its
// id may be a new user's now); its client is told Storage failed. and
// disconnected, and registers again. The log says so on every server.
//
// Everything else this server keeps by user id goes too (forgetUsers): it
// described the old bucket's users, and the new bucket hands their ids to
// others.
func (s *Server) dropSessions() {
	s.forgetUsers()
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.sessions))
	leases := make(map[uint32]uint64, len(s.leases))
	for id, c := range s.sessions {
		conns = append(conns, c)
		leases[id] = s.leases[id]
		delete(s.leases, id) // a refresh under way releases what it writes
		delete(s.sessions, id)
		if ch := c.channel; ch != 0 {
			delete(s.members[ch], c)
			c.channel = 0
		}
		c.user = proto.User{}
	}
	s.mu.Unlock()
	s.log.Error("the users bucket is not the one this server knew (NATS's store wiped): ending every session on this server", "sessions", len(conns))
	for id, lease := range leases {
		s.releaseSession(id, lease) // a key a refresh made again in the new bucket
	}
	for _, c := range conns {
		s.reply(c, proto.Error{Value: proto.MsgStorageFailed})
		c.out.finish()
		c.nc.SetReadDeadline(time.Now()) // the reader ends; the writer sends the notice and closes
	}
}

// forgetUsers forgets what this server keeps by user id: the login memo,
// the chat budgets, the channels each user created, the names cached. The
// ids were handed out by a users bucket that is gone, and the new one
// hands them to new users: kept, the memo logged a new user in with the
// password of the old user of the same id, on the server where that one
// had logged in (attacker5's F2, 2 runs in 2), and the new user would have
// inherited the old one's budgets and name.
func (s *Server) forgetUsers() {
	s.admit().logins.forget()
	s.chat.Reset()
	s.mu.Lock()
	clear(s.created)
	clear(s.users)
	// The channels came from the same store: their ids are handed out
	// again by the new bucket, to other names (attacker5's F7: after a
	// wipe two servers gave ids 1 and 2 different names, and old ids were
	// accepted, their messages heard in a new channel). The cache is
	// emptied and read again from the bucket (watchChannels).
	clear(s.channels)
	clear(s.byName)
	clear(s.members)
	s.mu.Unlock()
	signal(s.rewatch)
	s.channelShares.Forget() // the channels they counted were in the wiped store too
}
