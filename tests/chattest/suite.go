// Package chattest is the conformance suite of the chat server of chapters 02
// (one goroutine per client) and 05 (an epoll event loop): black-box checks,
// over real sockets, of the chat protocol v1 behaviour in docs/protocols.md
// §1 and docs/protocols.md. A chapter wires its server in with a few lines:
//
//	var impl = chattest.Impl{NewServer: func(c chattest.Config) (lab.Server, error) { … }}
//	func TestEx2_1_Login(t *testing.T) { chattest.Login(t, impl) }
//
// Each exported check grades one exercise and can run alone. The checks
// depend only on the protocol and on Impl: nothing in them knows how the
// server is built, so an event loop passes them as well as goroutines do.
//
// The policies the suite holds every server to:
//
//   - The first frame must be LOGIN, within Config.LoginTimeout; anything
//     else closes the connection without a reply. FAIL closes too.
//   - A name already online cannot log in again: the newcomer gets FAIL and is
//     closed, and the session that has the name keeps it.
//   - A name logs in only if the users file has it (bytewise); an empty
//     sender or one without NUL is a malformed frame.
//   - Users that the discovery server appends to the users file while the
//     chat server runs can log in at once. A line that is not a valid user
//     (tools/given/users: a name with a space, a reserved name such as "server")
//     costs that line only.
//   - Relayed frames carry the authenticated sender; the rest of the header
//     is relayed as the client wrote it (a BROADCAST's target "all" stays
//     "all", as in the original).
//   - After login, a frame that is not BROADCAST, PRIVATE_MSG, QUERY_USER or
//     STATUS_UPDATE (ignored) closes the connection, as does a malformed frame
//     (payload over 64 KiB, a name without NUL).
//   - A client whose pending output would exceed Config.MaxPending bytes may
//     be disconnected at once, or (Impl.SlowsSender) once it has read nothing
//     for a stall timeout, the sender being slowed down meanwhile. Clients
//     that read are not disconnected by a burst of 4 MiB; with SlowsSender,
//     not by any burst, even when they stop reading for a moment.
package chattest

import (
	"log/slog"
	"time"

	"serverlab/tools/given/lab"
)

// Impl is what a chapter hands to the suite.
type Impl struct {
	// NewServer builds a server from the suite's configuration.
	NewServer func(Config) (lab.Server, error)
	// SlowsSender says that the server's policy for a full queue is to slow
	// the sender down (chapter 02) rather than to disconnect the receiver at
	// once (chapter 05): the suite then also checks that readers that fall
	// behind a burst for a moment are not disconnected.
	SlowsSender bool
	// GoroutinePerClient says that each client is served by goroutines of
	// its own (chapter 02). The suite then checks what only that design can
	// promise or get wrong: a login that waits for the users file holds up
	// no one else (an event loop reads the file on its loop), and a client's
	// goroutines end once it is gone, also when it half-closed and stopped
	// reading.
	GoroutinePerClient bool
}

// Config is what the suite sets when it builds a server, in protocol terms.
type Config struct {
	// UsersPath is the users file (tools/given/users format). The suite writes it
	// and may append to it, or empty it, while the server runs.
	UsersPath string
	// MaxPending is the most bytes of frames the server may hold for one
	// client that has not read them yet (its outbox, or its pending output
	// buffer), not counting the kernel's socket buffers. A client that would
	// need more is disconnected. The suite never sets it below one frame of
	// the largest size (72 + 65536 bytes); 0 means the server's default.
	MaxPending int
	// LoginTimeout is how long a new connection has to send a complete LOGIN
	// frame; 0 means the server's default.
	LoginTimeout time.Duration
	// StallTimeout is how long the server may wait for a client that reads
	// nothing: for room in its queue, or, once it has half-closed, for it to
	// take its last replies. 0 means the server's default; a server without
	// one ignores it.
	StallTimeout time.Duration
	// Logger receives the server's log (the suite always sets it).
	Logger *slog.Logger
}
