// Package webtest is the conformance suite of chapter 06: black-box checks of
// the OSTEP web server re-created in Go (docs/protocols.md §4), over real
// sockets on 127.0.0.1. A chapter wires its package in with a few lines:
//
//	var impl = webtest.Impl{ReadRequest: …, NewHandler: …, NewServer: …}
//	func TestEx6_1_Parse(t *testing.T) { webtest.Parse(t, impl) }
//
// Each exported check grades one exercise and can run alone. Exercises 6.1–6.4
// are checked through a Handler, which serves one connection on the caller's
// goroutine, so they need no worker pool; 6.5–6.7 check the whole server.
// Structural checks (who waits, in which order requests are served) use the
// Queued and Started hooks of Config, never timing.
package webtest

import (
	"bufio"
	"context"
	"io/fs"
	"log/slog"
	"net"
	"syscall"
	"time"

	"serverlab/tests/webtest/cgiprog"
	"serverlab/tools/given/lab"
)

// A test binary that imports this suite doubles as the suite's CGI programs:
// started from a hard link named *.cgi, it runs the program and exits before
// any test starts. It exits with syscall.Exit: os.Exit in a binary built with
// -race waits a second for the race detector's report, which would make every
// CGI request of the suite a second slower.
func init() {
	if cgiprog.Invoked() {
		syscall.Exit(cgiprog.Main())
	}
}

// Impl is what a chapter hands to the suite.
type Impl struct {
	// ReadRequest reads one request (exercise 6.1).
	ReadRequest func(*bufio.Reader) (Request, error)
	// Status is the HTTP status code an error from the chapter deserves
	// (400, 403, 404, 501, …).
	Status func(error) int
	// Resolve opens the document root root and maps uri to a file under it
	// (exercise 6.2).
	Resolve func(root, uri string) (Resolved, error)
	// NewHandler builds the one-connection handler (exercises 6.1–6.4).
	NewHandler func(Config) (Handler, error)
	// NewServer builds the whole server (exercises 6.5–6.7).
	NewServer func(Config) (lab.Server, error)
}

// Request is a parsed request.
type Request struct {
	Method, URI, Version string
	Header               []string // header lines without line endings, in order
}

// Resolved is what a URI names under the document root.
type Resolved struct {
	Path  string      // the file on disk: the root joined with the decoded path
	Query string      // after '?'
	CGI   bool        // the path contains "cgi"
	Size  int64       // the file's size
	Info  fs.FileInfo // the open file's (to tell which file it really is)
}

// Handler serves one connection on the caller's goroutine and closes it.
// Cancelling ctx stops a CGI program running for it.
type Handler interface {
	ServeConn(ctx context.Context, conn net.Conn)
	Close() error
}

// Config is what the suite sets when it builds a handler or a server.
type Config struct {
	Root         string
	Threads      int
	Buffers      int
	SFF          bool // shortest file first instead of FIFO
	ReadTimeout  time.Duration
	WriteTimeout time.Duration
	CGITimeout   time.Duration
	// AgeRate, under SFF, is how many bytes of size a request is forgiven per
	// second it waits (the chapter's Config.AgeRate); 0 is pure SFF.
	AgeRate float64
	// Queued is called when the master puts work into the buffer: with the
	// request URI under SFF, with "" under FIFO.
	Queued func(uri string)
	// Started is called by a worker when it starts on a request, with its
	// URI; it may block.
	Started func(uri string)
	// Logger, if set, is the server's logger (the contract check slows it
	// down); nil means the suite's usual one.
	Logger *slog.Logger
}

// Protocol facts (docs/protocols.md §4) the checks compare against.
const (
	maxRequestLine = 8 << 10
	maxHeaderBytes = 64 << 10
	cgiPrefix      = "HTTP/1.0 200 OK\r\nServer: OSTEP WebServer\r\n"
)
