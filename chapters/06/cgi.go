package web

import (
	"context"
	"io"
	"time"

	"serverlab/tools/lab"
)

// cgiPrefix is what the server writes before a CGI program's output: the
// program writes the rest of the header and the body.
const cgiPrefix = "HTTP/1.0 200 OK\r\nServer: OSTEP WebServer\r\n"

// RunCGI runs the program t with QUERY_STRING set to t.Query and sends its
// standard output to w after cgiPrefix.
//
// The program is started directly, without a shell, so nothing in the URI can
// become a command. It gets at most timeout to finish; after that, or if ctx
// is cancelled (the server is closing), or if the client goes away, it is
// killed. Either way RunCGI waits for it: the worker that started the child
// is the one that reaps it, and no other (the original's wait(NULL) could
// reap another thread's child).
//
// A program that is not executable is a *StatusError 403, returned before
// anything is written. Once the prefix is out, errors can only be logged.
func RunCGI(ctx context.Context, w io.Writer, t *Target, timeout time.Duration) error {
	// TODO(ex 6.4): no execute bit in t.Info.Mode() → 403, before writing
	// anything. Derive a context with the timeout; exec.CommandContext(ctx,
	// t.Path) (no shell!), with Env holding at least "QUERY_STRING="+t.Query;
	// set cmd.WaitDelay. Take cmd.StdoutPipe, Start (a failure is 403), write
	// cgiPrefix, io.Copy the pipe to w; if the copy fails, the client is gone:
	// cancel the context to kill the program. Always cmd.Wait (it reaps exactly
	// this child). Checked by TestEx6_4_CGI.
	return lab.NotImplemented("6.4", "RunCGI")
}
