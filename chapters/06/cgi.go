package web

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"time"
)

// cgiPrefix is what the server writes before a CGI program's output: the
// program writes the rest of the header and the body.
const cgiPrefix = "HTTP/1.0 200 OK\r\nServer: OSTEP WebServer\r\n"

// cgiWaitDelay is how long RunCGI waits, once the program has exited (or been
// killed), for its output pipe to close. A program that leaves a background
// child holding its stdout would otherwise keep the worker until that child
// ends, whatever the time limit says.
const cgiWaitDelay = time.Second

// RunCGI runs the program t with QUERY_STRING set to t.Query and sends its
// standard output to w after cgiPrefix.
//
// The program is started directly, without a shell, so nothing in the URI can
// become a command. It runs in a process group of its own (isolate). It gets
// at most timeout to finish; after that, or if ctx is cancelled (the server is
// closing), or if the client goes away, the whole group is killed. Either way
// RunCGI waits for it: the worker that started the child is the one that reaps
// it, and no other (the original's wait(NULL) could reap another thread's
// child).
//
// The program's output is copied by cmd.Wait itself (cmd.Stdout is a writer,
// not a pipe RunCGI reads), so cmd.WaitDelay bounds the copy too: a program
// that exits but leaves a child holding its stdout cannot hold the worker
// past cgiWaitDelay. Whatever the program leaves behind in its group is killed
// when it is done.
//
// A program that is not executable is a *StatusError 403, returned before
// anything is written; so is one that cannot be started. A program that fails
// (or is killed, or says nothing) before the end of its header is a
// *StatusError 500: nothing has been sent yet, so the client gets an error page
// instead of a truncated 200 (see cgiOutput). Once the header is out, errors can
// only be logged.
func RunCGI(ctx context.Context, w io.Writer, t *Target, timeout time.Duration) error {
	// TODO(ex 6.4): Done when: a file without an execute bit is a 403 before
	// anything is written; otherwise the program runs directly (never through a
	// shell), with QUERY_STRING in its environment, its output streamed to the
	// client through cgiOutput (which cancels the run when the client goes
	// away), isolated in its own process group; a program that cannot start is
	// a 403; the run is bounded by the timeout, the copy of its output by
	// cgiWaitDelay, the child is reaped and what it left behind in its group
	// killed, and the result is what cgiOutput's finish makes of the way it
	// ended. Checked by TestEx6_4_CGI.
	return notImplemented("6.4", "RunCGI")
}

// maxCGIHeader is how much of a CGI program's output cgiOutput holds back
// while it waits for the end of the program's header.
const maxCGIHeader = 8 << 10

// cgiOutput is where a CGI program's standard output goes. It holds the
// output back until the program's header is complete (an empty line), then
// sends cgiPrefix and the header in one write, and everything after it as it
// comes. So a program that fails before it has written a header has sent
// nothing, and the server can still answer 500; one that writes its header and
// keeps working (spin, a slow report) is streamed at once.
//
// cmd.Wait calls Write from one goroutine and returns only after it is done,
// so finish, called after Wait, needs no lock.
type cgiOutput struct {
	w          io.Writer
	clientGone func() // called when a write fails: stop the program
	head       []byte // output held back, until sent
	sent       bool   // cgiPrefix and head are out
	err        error  // the first write error
}

func (o *cgiOutput) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	if o.sent {
		return o.write(p)
	}
	o.head = append(o.head, p...)
	if bytes.Contains(o.head, []byte("\n\n")) || bytes.Contains(o.head, []byte("\r\n\r\n")) || len(o.head) >= maxCGIHeader {
		if _, err := o.flush(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// flush sends cgiPrefix and the held-back output in one write.
func (o *cgiOutput) flush() (int, error) {
	o.sent = true
	buf := append([]byte(cgiPrefix), o.head...)
	o.head = nil
	return o.write(buf)
}

func (o *cgiOutput) write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	if err != nil {
		o.err = err
		o.clientGone() // the client is gone: stop the program instead of letting it block on a full pipe
	}
	return n, err
}

// finish decides, once the program is done, what the request's outcome is.
// waitErr is what cmd.Wait returned.
func (o *cgiOutput) finish(name string, waitErr error) error {
	if errors.Is(waitErr, exec.ErrWaitDelay) && o.sent {
		waitErr = nil // the program itself ended well; a child it left held the pipe
	}
	switch {
	case o.sent:
		return errors.Join(o.err, waitErr)
	case waitErr != nil:
		return &StatusError{Code: 500, Msg: name + " failed before it sent a header", Err: waitErr}
	case len(o.head) == 0:
		return statusErrorf(500, "%s ended without output", name)
	default:
		// A complete run whose header has no empty line: send what it said.
		_, err := o.flush()
		return err
	}
}
