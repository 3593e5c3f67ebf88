package web

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"serverlab/tools/given/lab"
)

// Config configures a Handler and a Server. The zero value of every field
// means its default.
type Config struct {
	Root    string // the document root (-d, default ".")
	Threads int    // workers (-t, default 1)
	Buffers int    // slots in the buffer between master and workers (-b, default 1)
	Policy  Policy // FIFO (default) or SFF (-s)

	// AgeRate, for SFF only, is how many bytes of file size a request is
	// forgiven per second it has waited (0: pure SFF). See sffKey.
	AgeRate float64
	// CGISize is the size SFF schedules a CGI request as (default 0: before
	// every file; CGI output is small and its time is the program's).
	CGISize int64

	// ReadTimeout bounds the whole request head, from the connection's first
	// read to its empty line (default 3s). A client still sending when it
	// expires is answered 408 Request Timeout; one that sent nothing is closed
	// without a word. A GET request fits in one packet: a client that needs
	// longer is a slowloris holding a worker.
	ReadTimeout time.Duration

	WriteTimeout time.Duration // to send a whole static response (default 60s)
	CGITimeout   time.Duration // for a CGI program to finish (default 30s)

	Logger *slog.Logger // default slog.Default()

	// Queued, if set, is called when the master puts work into the buffer:
	// with the request URI under SFF, and with "" under FIFO (whose master
	// does not read requests). Tests use it to know what is waiting.
	Queued func(uri string)
	// Started, if set, is called by a worker when it starts on a request,
	// with its URI ("" if the request could not be read). It may block: tests
	// use it to hold a worker.
	Started func(uri string)
}

func (c Config) withDefaults() Config {
	if c.Root == "" {
		c.Root = "."
	}
	c.Threads = max(c.Threads, 1)
	c.Buffers = max(c.Buffers, 1)
	if c.ReadTimeout <= 0 {
		c.ReadTimeout = 3 * time.Second
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = 60 * time.Second
	}
	if c.CGITimeout <= 0 {
		c.CGITimeout = 30 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Queued == nil {
		c.Queued = func(string) {}
	}
	if c.Started == nil {
		c.Started = func(string) {}
	}
	return c
}

// Handler serves one connection at a time, on the caller's goroutine: read
// one request, answer it, close. The Server runs it on its workers; the
// suite also runs it alone, to check exercises 6.1–6.4 before there is a
// pool.
type Handler struct {
	cfg  Config
	docs *Docroot
	log  *slog.Logger
}

// NewHandler opens cfg.Root and returns a handler for it.
func NewHandler(cfg Config) (*Handler, error) {
	cfg = cfg.withDefaults()
	docs, err := OpenDocroot(cfg.Root)
	if err != nil {
		return nil, err
	}
	return &Handler{cfg: cfg, docs: docs, log: cfg.Logger}, nil
}

// Close releases the document root.
func (h *Handler) Close() error { return h.docs.Close() }

// ServeConn serves one request on conn and closes it. Cancelling ctx stops a
// CGI program that is running for it.
func (h *Handler) ServeConn(ctx context.Context, conn net.Conn) {
	j := &job{conn: conn}
	h.read(j)
	h.respond(ctx, j)
}

// job is one connection on its way through the server: accepted, then read
// (by a FIFO worker, or by the SFF master), then answered by a worker.
type job struct {
	conn   net.Conn
	in     countingReader // conn, counted: did the client send anything?
	read   bool           // the request has been read (req/target/err are set)
	uri    string         // the request URI, if a request was read
	target *Target        // what to send, if the request is good
	err    error          // why not: a *StatusError to answer, or a dead connection
	key    int64          // SFF priority: smaller is served first
	seq    uint64         // arrival order, to break ties
}

// readers recycles the buffered readers requests are read with.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4096) }}

// read reads the request on j.conn and opens what it names, recording the
// outcome in j.
func (h *Handler) read(j *job) {
	j.read = true
	if j.err = h.armRead(j.conn); j.err != nil {
		return
	}
	j.in = countingReader{r: j.conn}
	br := readers.Get().(*bufio.Reader)
	br.Reset(&j.in)
	req, err := ReadRequest(br)
	br.Reset(nil)
	readers.Put(br)
	if err != nil {
		j.err = timedOut(err, j.in.n)
		return
	}
	j.uri = req.URI
	j.target, j.err = h.docs.Open(req.URI)
}

// timedOut turns the read deadline expiring in the middle of a request (n
// bytes of it have arrived) into a 408 answer: the client, a slowloris or one
// on a very bad link, learns why it is cut off. An error of any other kind, or
// a deadline on a connection that sent nothing at all, is left as it is.
func timedOut(err error, n int) error {
	if n > 0 && errors.Is(err, os.ErrDeadlineExceeded) {
		return &StatusError{Code: 408, Msg: "the request did not arrive in time", Err: err}
	}
	return err
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// respond answers a job that has been read, and closes its connection.
func (h *Handler) respond(ctx context.Context, j *job) {
	defer j.conn.Close()
	if j.target != nil {
		defer j.target.Close()
	}
	h.cfg.Started(j.uri)
	err := j.err
	switch {
	case err != nil:
	case j.target.CGI:
		// The program's time limit bounds the whole response.
		if err = h.armWrite(j.conn, h.cfg.CGITimeout); err == nil {
			err = RunCGI(ctx, j.conn, j.target, h.cfg.CGITimeout)
		}
	default:
		if err = h.armWrite(j.conn, h.cfg.WriteTimeout); err == nil {
			err = ServeStatic(j.conn, j.target)
		}
	}
	h.finish(j, err)
}

// finish answers a request that failed with a *StatusError, and logs the rest.
func (h *Handler) finish(j *job, err error) {
	var se *StatusError
	switch {
	case err == nil:
		if h.log.Enabled(context.Background(), slog.LevelDebug) { // skip building the arguments
			h.log.Debug("served", "uri", j.uri)
		}
	case errors.Is(err, io.EOF):
		// connected and closed without a request: nothing to answer
		h.log.Debug("closed without a request", "remote", j.conn.RemoteAddr())
	case errors.As(err, &se), errors.Is(err, lab.ErrNotImplemented):
		// An unfinished exercise is answered with a 500 page that names it.
		if h.armWrite(j.conn, h.cfg.WriteTimeout) == nil {
			writeError(j.conn, err) // best effort: the client may be gone
		}
		h.log.Debug("refused", "uri", j.uri, "err", err)
	default:
		h.log.Debug("connection failed", "uri", j.uri, "remote", j.conn.RemoteAddr(), "err", err)
	}
}
