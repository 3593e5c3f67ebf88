// Package chatscaletest is the suite of chapter 08: several chatcore servers
// that share their chat through NATS JetStream. The checks speak chapter
// 07's protocol to the servers over real sockets, and look at NATS itself —
// which the suite runs, on ports it reserves up front, in its own process —
// to see what was stored and to take NATS away and bring it back.
//
// What the suite knows of a server's insides is what the lesson fixes as
// the chapter's contract (chapters/08/README.md): the stream CHAT, one subject
// chat.msg.<channel id> per channel, a message's body {"user":…,
// "content":…} and its id in the Nats-Msg-Id header, and the buckets
// chat_users, chat_channels and chat_sessions (key s.<user id>).
//
// A chapter wires its server in with a few lines:
//
//	var impl = chatscaletest.Impl{NewServer: func(c chatscaletest.Config) (lab.Server, error) { … }}
//	func TestEx8_1_DurableEcho(t *testing.T) { chatscaletest.DurableEcho(t, impl) }
package chatscaletest

import (
	"log/slog"
	"time"

	"serverlab/tools/given/lab"
)

// Impl is what a chapter hands to the suite.
type Impl struct {
	// NewServer builds one chat server from the suite's configuration. It
	// may be called several times in one check: several servers on one
	// NATS.
	NewServer func(Config) (lab.Server, error)
}

// Config is what the suite sets when it builds a server. Zero values mean
// the server's defaults.
type Config struct {
	// NATSURL is the NATS the server must join (the suite always sets it).
	NATSURL string
	// DBPath is a path in a fresh temporary folder, for whatever the server
	// keeps locally.
	DBPath string
	// Replicas is the copies the stream and buckets must have (3 on the
	// suite's 3-node cluster).
	Replicas int
	// PublishTimeout bounds how long a chat message may wait for the
	// stream's acknowledgement before the sender is told Message not
	// stored.; RequestTimeout bounds every other NATS call of a request.
	PublishTimeout time.Duration
	RequestTimeout time.Duration
	// SessionTTL is how long a session's key outlives its server.
	SessionTTL time.Duration
	// MaxStreamBytes is the budget of the stream CHAT (its MaxBytes): once
	// it is full a new message is refused until room is made.
	MaxStreamBytes int64
	// HashIterations is the password hash's cost (the suite keeps it low).
	HashIterations int
	// Limits, as chapter 07's and with its meanings (0: the server's
	// default; docs/chatcore.md, "Limits"): the hostile suite
	// (tests/chatcoretest/hostile) sets them. MaxPending is in bytes.
	LoginTimeout          time.Duration
	IdleTimeout           time.Duration
	WriteTimeout          time.Duration
	MaxConnections        int
	MaxConnsPerAddress    int
	PreAuthBudget         int
	InputBudget           int
	OutputBudget          int
	HistoryReads          int
	MaxPending            int
	MaxChannels           int
	MaxChannelsPerUser    int
	MaxChannelsPerAddress int
	AddressFailures       int
	FailureWindow         time.Duration
	MaxMessage            int // a chat message's content, in bytes
	PresenceBurst         int // presence events sent to one connection at once
	PresenceRate          int // a second, that refill its budget
	ChatBurst             int // chat bytes one user may write at once
	ChatRate              int // a second, that refill its budget
	HashWait              time.Duration
	// Logger is the server's log.
	Logger *slog.Logger
}
