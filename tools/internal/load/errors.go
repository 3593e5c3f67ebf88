package load

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

// Error kinds: the short names under which Result counts failures. A mode can
// add its own with WithKind.
const (
	KindTimeout     = "timeout"       // a deadline passed: the server did not answer in time
	KindRefused     = "refused"       // nothing listens on the address (or the backlog is full)
	KindReset       = "reset"         // the server reset the connection
	KindBrokenPipe  = "broken pipe"   // wrote to a connection the server had closed
	KindEOF         = "eof"           // the server closed the connection mid-reply
	KindClosed      = "closed"        // used a connection this side had closed
	KindCanceled    = "canceled"      // the run was cancelled
	KindTooManyFDs  = "too many fds"  // this process or the system ran out of file descriptors
	KindNoPorts     = "no ports"      // no local port or address left to connect from
	KindBadReply    = "bad reply"     // the reply broke the protocol or did not match the request
	KindInFlightCap = "in-flight cap" // FixedRate: an arrival found MaxInFlight requests outstanding
	KindOther       = "other"         // anything not recognised; Result.Examples shows one
)

// ErrBadReply is what a mode wraps when a reply is well-formed enough to read
// but wrong, e.g. fmt.Errorf("%w: sent %q, got %q", load.ErrBadReply, sent, got).
var ErrBadReply = errors.New("bad reply")

// ErrInFlightCap is the failure FixedRate records for an arrival that would
// have exceeded MaxInFlight. It is counted, not queued without bound: a load
// generator that silently waits would hide the very stall it should measure.
var ErrInFlightCap = errors.New("in-flight cap reached")

// WithKind returns an error that ErrorKind classifies as kind, for failures
// that only the mode can name (e.g. "wrong sender"). It wraps err, which may be
// nil.
func WithKind(kind string, err error) error {
	if err == nil {
		err = errors.New(kind)
	}
	return &kindError{kind: kind, err: err}
}

type kindError struct {
	kind string
	err  error
}

func (e *kindError) Error() string { return e.err.Error() }
func (e *kindError) Unwrap() error { return e.err }
func (e *kindError) Kind() string  { return e.kind }

// ErrorKind classifies err into one of the short Kind names, so that a run's
// thousands of failures read as "timeout 12, reset 3" rather than as thousands
// of messages. It returns "" for nil and KindOther for what it does not know.
// An error with a Kind() string method (see WithKind) names its own kind.
func ErrorKind(err error) string {
	if err == nil {
		return ""
	}
	var named interface{ Kind() string }
	if errors.As(err, &named) {
		return named.Kind()
	}
	for _, c := range classes {
		for _, target := range c.targets {
			if errors.Is(err, target) {
				return c.kind
			}
		}
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return KindTimeout
	}
	return KindOther
}

// classes maps errors to kinds, most specific first: a deadline on a closed
// connection is a timeout, a reset is not an EOF.
var classes = []struct {
	kind    string
	targets []error
}{
	{KindBadReply, []error{ErrBadReply}},
	{KindInFlightCap, []error{ErrInFlightCap}},
	{KindTimeout, []error{os.ErrDeadlineExceeded, context.DeadlineExceeded, syscall.ETIMEDOUT}},
	{KindRefused, []error{syscall.ECONNREFUSED}},
	{KindReset, []error{syscall.ECONNRESET, syscall.ECONNABORTED}},
	{KindBrokenPipe, []error{syscall.EPIPE}},
	{KindTooManyFDs, []error{syscall.EMFILE, syscall.ENFILE}},
	{KindNoPorts, []error{syscall.EADDRNOTAVAIL, syscall.EADDRINUSE}},
	{KindEOF, []error{io.EOF, io.ErrUnexpectedEOF}},
	{KindClosed, []error{net.ErrClosed}},
	{KindCanceled, []error{context.Canceled}},
}

// setupError marks a failure to set up a client, so that "setup: refused"
// (the server was not there) reads differently from "refused" mid-run.
func setupError(err error) error {
	return WithKind("setup: "+ErrorKind(err), err)
}
