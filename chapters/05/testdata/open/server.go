//go:build linux

package evloop

import (
	"log/slog"
	"net"
	"time"

	"serverlab/tools/given/stockfile"
)

// Options tune the loop. The zero value is usable.
type Options struct {
	// HighWater is the amount of unsent output at which the loop stops
	// reading from a connection, until its output has been sent: a client
	// that pipelines requests but does not read the replies cannot make the
	// server buffer without limit (default 64 KiB).
	HighWater int
	// MaxPending is the amount of unsent output at which a connection is
	// closed as a slow consumer: stopping to read from it does not help when
	// its output comes from other clients (default 4 MiB).
	MaxPending int
	// StallTimeout is how long a connection's pending output may make no
	// progress at all — the kernel takes not one byte of it — before the
	// connection is closed as stalled (ErrStalled; default 2s). MaxPending
	// bounds what a client that does not read costs; StallTimeout bounds how
	// long it costs it: back-pressure alone would keep a client that
	// pipelines requests and never reads paused for ever, and a chat client
	// that never reads would be dropped only once MaxPending bytes of other
	// people's messages had piled up for it (seconds, at chat rates).
	StallTimeout time.Duration
	// CloseGrace bounds how long Close lets replies already queued finish
	// sending, so that no client receives half a reply (default 1s).
	CloseGrace time.Duration
	// Logger receives the loop's log (default slog.Default()).
	Logger *slog.Logger
}

// EchoConfig configures the echo server.
type EchoConfig struct {
	// Repeat is how many copies of a line its reply holds (default 1): a
	// short request gets a long reply, as a stock `show` does.
	Repeat int
	// GreetTimeout closes a connection that has not sent a whole line this
	// long after it connected (0: never), like the chat server's login
	// timeout. It is the echo server's only timer.
	GreetTimeout time.Duration
	// Loop tunes the event loop.
	Loop Options
}

// ChatConfig configures the chat server.
type ChatConfig struct {
	// UsersPath is the users file the discovery server writes (default
	// "users.txt"). It is read once by NewChat; then the loop reads only what
	// the discovery server appends (users.Cache), at most refreshBudget bytes
	// at a time, so a user who registers while the chat server runs can log
	// in and no read of the file stalls the loop.
	UsersPath string
	// LoginTimeout is how long a new connection has to log in (default 10s):
	// a connection that never does would otherwise hold its fd for ever.
	LoginTimeout time.Duration
	// Loop tunes the event loop.
	Loop Options
}

// StockConfig configures the stock server.
type StockConfig struct {
	// StockPath is the stock file (default "stock.txt"); the server refuses to
	// start without it.
	StockPath string
	// SyncInterval is how often the tree is written back while clients are
	// connected (default 16s, as the original).
	SyncInterval time.Duration
	// OnSync, if set, is called after each write-back with its result, from
	// the loop's goroutine. Tests use it to wait for a sync instead of
	// sleeping.
	OnSync func(error)
	// Saver writes the file atomically; its Intercept lets tests inject a
	// failing write.
	Saver stockfile.Saver
	// Loop tunes the event loop.
	Loop Options
}

// Loop is the event loop, and the server of every protocol on it: its design
// is yours, within the chapter's one rule, that one goroutine serves every
// client with epoll (serverlab/tools/given/rawsys and golang.org/x/sys/unix give
// the system calls). The suite reaches it only through the constructors
// below, Serve and Close (evloop_test.go) and over the network; the programs
// in cmd/ fill in the configurations. The drains (exercises 5.1 and 5.2,
// whose API the suite calls directly) are the guided track's.
//
//mirror:keep the open track's own: its design is the student's
type Loop struct {
	opt Options
}

// Serve runs the loop on ln until Close. It always returns a non-nil error:
// lab.ErrServerClosed after Close.
//
// The exercises are the suite's checks; each is done when what it says is
// true of the servers as a whole (chapters/05/README.md has the rules):
//
// TODO(ex 5.3): Done when: a request split across reads, or several in one
// read, is handled whole and in order, and an idle connection holds no
// buffer. Checked by TestEx5_3_Leftovers.
//
// TODO(ex 5.4): Done when: a reply the socket does not take at once is sent
// whole, in order, when the socket drains, and no write ever blocks the
// loop. Checked by TestEx5_4_PartialWrites.
//
// TODO(ex 5.5): Done when: a client that does not read stops being read at
// HighWater, is closed at MaxPending or after StallTimeout without
// progress, and slows nobody else. Checked by TestEx5_5_BackPressure.
//
// TODO(ex 5.6): Done when: an idle loop sleeps in epoll_wait (no busy
// loop, no EPOLLOUT it does not need) and timers wake it on time. Checked
// by TestEx5_6_NoBusyLoop.
//
// TODO(ex 5.7): Done when: out of file descriptors, the loop neither spins
// nor leaves clients hanging in the backlog, and recovers when descriptors
// free up. Checked by TestEx5_7_EMFILE.
//
// TODO(ex 5.8): Done when: Close, from any goroutine and as often as
// called, wakes the loop, lets queued replies finish within CloseGrace,
// closes every descriptor and returns once the loop has ended. Checked by
// TestEx5_8_Close.
//
// TODO(ex 5.9): Done when: the chat server on the loop passes chapter 02's
// suite unchanged: login (5.9), broadcast (5.10), private messages (5.11),
// the user list (5.12), isolation from slow clients (5.13) and shutdown
// (5.14). Checked by TestEx5_9_ChatLogin to TestEx5_14_ChatShutdown.
//
// TODO(ex 5.15): Done when: the stock server on the loop passes chapter
// 04's server checks unchanged: commands (5.15), conservation (5.16),
// persistence (5.17) and close (5.18). Checked by TestEx5_15_StockCommands
// to TestEx5_18_StockClose.
func (l *Loop) Serve(ln net.Listener) error {
	ln.Close()
	return notImplemented("5.3", "Loop.Serve (open track: the design is yours)")
}

// Close stops the loop and waits for it. It is safe to call more than once,
// and before Serve.
//
//mirror:keep the open track's own: its design is the student's
func (l *Loop) Close() error {
	return nil
}

// NewEcho returns the echo server on an event loop: every '\n'-terminated
// line a client sends (DrainLines) is answered with "n " and Repeat copies
// of the line, then a newline, where n counts the lines the server answered
// before this one, from every client. The line "bye" is answered the same
// way, and then the connection is closed once the answer is sent (5.4
// checks it). A connection that has not sent a whole line GreetTimeout
// after it connected is closed. The loop's own exercises (5.3 to 5.8) are
// checked on it: on the guided track it is given code (echo.go), which the
// open track removes.
//
//mirror:keep the open track's own: its design is the student's
func NewEcho(cfg EchoConfig) *Loop {
	return &Loop{opt: cfg.Loop}
}

// NewChat returns the chat server of chat protocol v1 (docs/protocols.md §1)
// on an event loop.
//
//mirror:keep the open track's own: its design is the student's
func NewChat(cfg ChatConfig) (*Loop, error) {
	return &Loop{opt: cfg.Loop}, nil
}

// StockServer is the stock server of docs/protocols.md §3 on an event loop.
//
//mirror:keep the open track's own: its design is the student's
type StockServer struct {
	*Loop
}

// NewStock loads the stock file and returns the stock server.
//
//mirror:keep the open track's own: its design is the student's
func NewStock(cfg StockConfig) (*StockServer, error) {
	return &StockServer{Loop: &Loop{opt: cfg.Loop}}, nil
}

// Close stops the server, writes the stocks back and returns that write's
// error.
//
//mirror:keep the open track's own: its design is the student's
func (s *StockServer) Close() error {
	return s.Loop.Close()
}
