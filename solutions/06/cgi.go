package web

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"time"
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
	if t.Info.Mode().Perm()&0o111 == 0 {
		return statusErrorf(403, "%s is not executable", t.Name)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, t.Path)
	cmd.Env = []string{
		"QUERY_STRING=" + t.Query,
		"REQUEST_METHOD=GET",
		"SERVER_PROTOCOL=HTTP/1.0",
		"SCRIPT_NAME=/" + t.Name,
		"PATH=" + os.Getenv("PATH"),
	}
	cmd.WaitDelay = time.Second // a grandchild holding stdout open cannot hold the worker
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return &StatusError{Code: 403, Msg: "cannot run " + t.Name, Err: err}
	}
	_, copyErr := io.WriteString(w, cgiPrefix)
	if copyErr == nil {
		_, copyErr = io.Copy(w, out)
	}
	if copyErr != nil {
		cancel() // the client is gone: stop the program instead of letting it block on a full pipe
	}
	return errors.Join(copyErr, cmd.Wait())
}
