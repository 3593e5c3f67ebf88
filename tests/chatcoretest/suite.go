// Package chatcoretest is the conformance suite of chapter 07's chatcore
// server: black-box checks, over real sockets, of the protocol in
// docs/chatcore.md (the original's, github.com/ebroschin/chatcore, byte for
// byte) and of the defences the course adds. A chapter wires its server in
// with a few lines:
//
//	var impl = chatcoretest.Impl{NewServer: func(c chatcoretest.Config) (lab.Server, error) { … }}
//	func TestEx7_1_Frames(t *testing.T) { chatcoretest.Frames(t, impl) }
//
// Each exported check grades one exercise and runs alone. The checks know
// only the protocol, the database schema (the original's three tables) and
// Config.
//
// Every check that the original server would fail says so: the original
// drops malformed frames in silence, stores passwords in plain text, keeps
// chat messages in memory for up to a second before writing them (and reuses
// their ids after a crash), queues without bound for a client that does not
// read, never logs out a client that went silent, and lets any user stop it.
package chatcoretest

import (
	"crypto/tls"
	"log/slog"
	"time"

	"serverlab/tools/given/lab"
)

// Impl is what a chapter hands to the suite.
type Impl struct {
	// NewServer builds a server from the suite's configuration.
	NewServer func(Config) (lab.Server, error)
	// AddUser creates an account in the database of the configuration (its
	// DBPath) while no server runs on it, as the operator does with
	// chatcore-server -add-user: the way an administrator's account is made.
	AddUser func(c Config, name, password string) error
}

// Config is what the suite sets when it builds a server. Zero values mean
// the server's defaults.
type Config struct {
	// DBPath is the SQLite database (the suite makes a fresh one in a temp
	// dir, and reopens it to check what is stored).
	DBPath string
	// MaxPending is the most bytes of frames the server may queue for one
	// connection; one that would need more is disconnected. The suite never
	// sets it below one largest frame (4 + 1 MiB).
	MaxPending int
	// LoginTimeout: how long a connection may stay unauthenticated.
	LoginTimeout time.Duration
	// IdleTimeout: how long a connection that has sent a heartbeat may stay
	// silent, and how long a started frame may take to arrive.
	IdleTimeout time.Duration
	// CommitWindow: how long the committer waits for more messages to join
	// a batch.
	CommitWindow time.Duration
	// MaxBatch bounds the chat messages of one batch, one transaction (512).
	MaxBatch int
	// WriteTimeout bounds one write to a client (0: the server's default).
	// The back-pressure checks set it long, so that only the outbox's bound
	// can be what drops a client that stops reading.
	WriteTimeout time.Duration
	// Limits (0: the server's defaults, which the suite checks too; see
	// docs/chatcore.md, "Limits"). Names are in bytes: MaxUserName (32),
	// MaxChannelName (64); MaxMessage is a chat message's content in bytes
	// (16 KiB); MaxChannels the channels of the server (4096);
	// MaxChannelsPerUser the channels one user may create (64);
	// MaxChannelsPerAddress those the users of one address may (512);
	// MaxUserIDs the ids of one GetUsers (1000).
	MaxUserName           int
	MaxChannelName        int
	MaxMessage            int
	MaxChannels           int
	MaxChannelsPerUser    int
	MaxChannelsPerAddress int
	// MaxStoreBytes bounds the store (1 GiB): past it a chat message is
	// refused Message not stored.
	MaxStoreBytes int
	MaxUserIDs    int
	// Failed logins: MaxLoginFailures on one connection close it (5);
	// AddressFailures per FailureWindow from one address (20 a minute) make
	// its further attempts refused without a hash. HashWait is the longest a
	// password hash may wait for a core (8 s), HashQueue how many may wait.
	MaxLoginFailures int
	AddressFailures  int
	FailureWindow    time.Duration
	HashWait         time.Duration
	HashQueue        int
	// AddressRegistrations is how many users one address may register at
	// once, refilled over RegistrationWindow (512 an hour); past it a
	// registration is refused without a hash.
	AddressRegistrations int
	RegistrationWindow   time.Duration
	// MaxConnections bounds the open connections (4096); one past it is
	// told "Server busy." and closed. MaxIdle is how long any connection may
	// stay silent, with heartbeats or without (30 minutes).
	MaxConnections int
	MaxIdle        time.Duration
	// MaxConnsPerAddress bounds the open connections from one client
	// address (512); one past it is told "Too many connections from your
	// address." and closed.
	MaxConnsPerAddress int
	// PreAuthBudget bounds the bytes of frames over 64 KiB that connections
	// that have not logged in may be reading at once, together (64 MiB).
	PreAuthBudget int
	// InputBudget bounds the same for every connection, logged in or not
	// (256 MiB).
	InputBudget int
	// OutputBudget bounds the bytes of frames queued for every connection
	// together (128 MiB); a large reply (a history) may use half of it and
	// is answered "Server busy." past it. HistoryReads bounds the GetChats
	// read at once (8); one past it is answered "Server busy.".
	OutputBudget int
	HistoryReads int
	// PresenceBurst and PresenceRate are each connection's budget of
	// presence events (126, 125, 128, 127): PresenceBurst at once (100),
	// refilled at PresenceRate a second (20).
	PresenceBurst int
	PresenceRate  int
	// ChatBurst and ChatRate are each user's budget of chat bytes:
	// ChatBurst at once (1 MiB), refilled at ChatRate a second (64 KiB).
	ChatBurst int
	ChatRate  int
	// Admins may stop the server with Shutdown (102).
	Admins []string
	// TLS, if set, makes the server speak TLS.
	TLS *tls.Config
	// OnCommit, if set, must be called after each committed batch of chat
	// messages with the number of messages in it.
	OnCommit func(messages int)
	// FailAppends, if set, must be asked before each batch of chat messages
	// is stored: when it returns an error, storing that batch fails with it
	// (the wiring wraps the server's store). It stands for a disk that fails.
	FailAppends func() error
	// FailStore, if set, must be asked before each CreateUser, CreateChannel
	// and History call of the server's store, with that method's name: when
	// it returns an error, the call fails with it (the wiring wraps the
	// store). It stands for a disk that fails under any request.
	FailStore func(method string) error
	// SlowHash, if set, must make each password hash take a few hundred
	// milliseconds (the wiring raises the hash's passes and memory): the
	// lock-discipline check needs a hash long enough to see who waits for it.
	SlowHash bool
	// BurstHash, if set, must make each password hash take a few
	// milliseconds (the wiring sets one pass over 4 MiB): enough for a burst
	// of registrations to pile up in the hash queue, little enough for the
	// cores to clear it well within HashWait.
	BurstHash bool
	// Logger is the server's log. The suite sets it; the contract check
	// slows it down to see that Close waits for the goroutine that logs.
	Logger *slog.Logger
}
