package jobserver

import (
	"log/slog"
	"net"
	"time"
)

// Config configures a Server.
type Config struct {
	// Workers is the number of worker goroutines, the most jobs that run at
	// once (default runtime.NumCPU()).
	Workers int
	// QueueCap is the capacity of the job queue (default 1024). When it is
	// full, readers stop reading until a worker takes a job.
	QueueCap int
	// WriteTimeout bounds each write to a client (default 10s). A client that
	// stops reading its answers would otherwise hold its writer, and with it
	// Close, forever; after WriteTimeout without progress it is dropped.
	WriteTimeout time.Duration
	// MaxPending is how many bytes of answers a connection may have waiting
	// for its client before its reader stops reading requests (default
	// 64 KiB). Workers never wait for a client: they append to this outbox.
	MaxPending int
	// Logger receives the server's log (default slog.Default()).
	Logger *slog.Logger

	// Hooks for the test suite; nil in production.

	// OnLineRead is called by a connection's reader goroutine each time it has
	// read a line (valid or not, too large included), before the line takes
	// its job id.
	OnLineRead func()
	// OnJobStart is called by a worker just before it computes job id. The
	// worker waits while OnJobStart runs, so a test can hold workers.
	OnJobStart func(id uint64)
	// OnFastWrite is called with the bytes each non-blocking write of
	// answers took, before that write returns (the given fast path does it:
	// trywrite's Socket.Observed): the answer is on its way and the goroutine
	// that sent it waits, so a test can see that it was counted before it was
	// sent. A server without that fast path may never call it.
	OnFastWrite func(p []byte)
}

// Stats counts requests. Every line is Submitted when it takes its job id,
// then becomes Completed (answered OK) or Failed (answered ERROR); a request
// is counted before its answer is written, so a client holding an answer
// finds it counted.
type Stats struct {
	Submitted, Completed, Failed uint64
}

// Server is the job server: its design is yours. The suite reaches it only
// through New, Serve, Close and Stats (jobserver_test.go) and over the
// network; the program in cmd/jobserver fills in Config. The parser, the
// bounded queue and the pool (exercises 3.1 to 3.3, whose APIs the suite
// calls directly) and the answers (answer.go) are the guided track's: use
// them, or not, in a server of your own.
//
//mirror:keep the open track's own: its design is the student's
type Server struct {
	cfg Config
}

// New returns a server ready to Serve. It starts no goroutine (Serve does),
// so that a server that is never served leaves nothing running.
//
//mirror:keep the open track's own: its design is the student's
func New(cfg Config) (*Server, error) {
	return &Server{cfg: cfg}, nil
}

// Serve accepts connections on ln and serves them until Close. It always
// returns a non-nil error: lab.ErrServerClosed after Close.
//
// The exercises are the suite's checks; each is done when what it says is
// true of the server as a whole (chapters/03/README.md has the protocol, and
// docs/protocols.md §2 every answer):
//
// TODO(ex 3.4): Done when: every request line gets exactly one answer, OK
// with its job id and result or ERROR with its id and reason, ids taken from
// one server-wide counter in the order lines are read; at most Workers jobs
// compute at once, on a fixed set of workers; a worker never waits for a
// client; a line over the limit gets request too large and the connection
// ends after the answers already due. Checked by TestEx3_4_Server.
//
// TODO(ex 3.5): Done when: memory stays bounded however fast clients send
// and however slowly they read: at most QueueCap jobs wait, at most
// MaxPending bytes of answers wait per connection, and a client past either
// bound stops being read (TCP pushes back on it) rather than being buffered;
// OnLineRead and OnJobStart let the suite see it. Checked by
// TestEx3_5_BackPressure.
//
// TODO(ex 3.6): Done when: Close stops accepting, stops reading, answers
// every job already queued, then closes every connection and returns once
// every goroutine the server started has ended; a client that does not read
// holds Close at most WriteTimeout. Checked by TestEx3_6_Shutdown.
//
// TODO(ex 3.7): Done when: Stats counts every line as Submitted when it
// takes its id, and as Completed or Failed before its answer is written, and
// stays consistent under load (Completed + Failed never above Submitted).
// Checked by TestEx3_7_Statistics.
func (s *Server) Serve(ln net.Listener) error {
	ln.Close()
	return notImplemented("3.4", "Server.Serve (open track: the design is yours)")
}

// Stats returns the request counts so far.
//
//mirror:keep the open track's own: its design is the student's
func (s *Server) Stats() Stats {
	return Stats{}
}

// Close stops the server and waits for every goroutine it started. It is
// safe to call more than once, and before Serve. A line read while the
// server is closing, which no worker will run, is answered "server shutting
// down" (docs/protocols.md §2); the jobs already queued still run and are
// answered (3.6).
//
//mirror:keep the open track's own: its design is the student's
func (s *Server) Close() error {
	return nil
}
