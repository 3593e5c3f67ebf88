package chatcore

import (
	"crypto/tls"
	"log/slog"
	"net"
	"time"
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

// HashParams is the cost of argon2id: passes over memory, memory in KiB,
// and lanes. A hash costs about Time × MemoryKiB of memory traffic.
type HashParams struct {
	Time      uint32
	MemoryKiB uint32
	Threads   uint8
}

// DefaultHash is one of OWASP's equivalent minimums for argon2id (7 MiB,
// 5 passes, 1 lane; the others are 19 MiB × 2 and 12 MiB × 3): about 20 ms
// of one core per hash, which a login can afford and a password-guessing
// attacker with a stolen database cannot. Of the three it hashes the most
// passwords a second when both cores hash at once (measured here: 1.2–1.6×
// 19 MiB × 2's, which spends its time waiting for memory and allocating
// it), and a burst of registrations is exactly that.
var DefaultHash = HashParams{Time: 5, MemoryKiB: 7 * 1024, Threads: 1}

// Server is the chatcore server: its design is yours. The suite reaches it
// only through New, Serve and Close (chatcore_test.go) and over the network;
// the program in cmd/chatcore-server uses Config, the defaults above and
// HashParams. Keep those as they are, and build everything else: the
// connections, the shared state and what guards it, the committer, the
// outboxes. The store (store.go, sqlite.go) is given, and its schema is part
// of the contract: the suite reads the database file.
//
//mirror:keep the open track's own: its design is the student's
type Server struct {
	cfg Config
}

// New makes a server from cfg. It may open the store and load what it
// needs; it starts no goroutine (Serve does), so that a server that is
// never served leaks nothing.
//
//mirror:keep the open track's own: its design is the student's
func New(cfg Config) (*Server, error) {
	return &Server{cfg: cfg}, nil
}

// Serve accepts connections on ln and serves them until Close. It always
// returns a non-nil error: lab.ErrServerClosed after Close.
//
// The exercises are the suite's checks; each is done when what it says is
// true of the server as a whole (chapters/07/README.md has every rule of the
// protocol, and docs/chatcore.md every message):
//
// TODO(ex 7.1): Done when: every frame is answered in the order it came,
// one request at a time per connection; a frame that does not decode gets
// its 100 or 101 answer and the connection stays open; a frame over 1 MiB
// gets "Frame too large." and the connection closes; with Config.TLS the
// server speaks TLS, the handshake in the connection's own time. Checked by
// TestEx7_1_Frames.
//
// TODO(ex 7.2): Done when: users are created (109) and stored with an
// argon2id hash and a salt of their own, log in (115) once per user and per
// connection, log out (123), are looked up by name and id (113, 111); 126
// and 125 reach every open connection; no hash or database call delays
// another client's request. Checked by TestEx7_2_Users.
//
// TODO(ex 7.3): Done when: channels are created (107, 129 only for a new
// name), listed in id order (119), looked up (121), and joined (117: 127 to
// the old channel, 128 to the new one, the joiner in both, then 118).
// Checked by TestEx7_3_Channels.
//
// TODO(ex 7.4): Done when: a chat message (104) is in the database before
// anyone gets its 103, several messages share one transaction under load,
// and history (105) returns the newest messages, oldest first, in one frame.
// Checked by TestEx7_4_History.
//
// TODO(ex 7.5): Done when: a client that stops reading is disconnected once
// the frames queued for it pass Config.Limits.MaxPending, and nobody else (least of
// all whatever delivers chat messages) ever waits for it; the frames queued
// for all clients together stay within Config.Limits.OutputBudget (each
// frame's bytes drawn when it is queued and given back when it is written or
// discarded, however the connection ends); and a GetChats whose answer does not
// fit the budget's half for large replies, or that finds
// Config.Limits.HistoryReads others being read, is answered 100 "Server
// busy.". Checked by TestEx7_5_BackPressure.
//
// TODO(ex 7.6): Done when: a connection that does not log in within
// LoginTimeout, a started frame that does not finish within IdleTimeout and
// a heartbeat client (130, answered 131) silent for IdleTimeout are cut off,
// a quiet logged-in client that never sent 130 is not, and TCP keep-alive is
// on. Checked by TestEx7_6_Liveness.
//
// TODO(ex 7.7): Done when: only Config.Admins may stop the server with 102
// (others get "Not allowed."); Close, from anywhere and as often as called,
// commits and delivers what is in flight, sends every client "Server
// shutting down.", flushes for at most ShutdownGrace and returns once every
// goroutine the server started has ended. Checked by TestEx7_7_Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	ln.Close()
	return notImplemented("7.1", "Server.Serve (open track: the design is yours)")
}

// Close stops the server and waits for every goroutine it started. It is
// safe to call more than once, and before Serve. What is in flight is
// committed and delivered first, and every client is sent "Server shutting
// down." before its connection closes (7.7).
//
//mirror:keep the open track's own: its design is the student's
func (s *Server) Close() error {
	return nil
}

// AddUser creates an account directly in the store, as an operator does
// before starting the server (chatcore-server -add-user): a name in
// Config.Admins is an administrator only if its account existed when the
// server started, so that registering it grants nothing.
//
//mirror:keep the open track's own: its design is the student's
func (s *Server) AddUser(name, password string) error {
	// TODO(ex 7.2): Done when: the name is checked as a registration's is,
	// only the password's hash is stored, and a name that exists is an
	// error. Checked by TestEx7_7_Shutdown (an administrator's account).
	return notImplemented("7.2", "Server.AddUser")
}
