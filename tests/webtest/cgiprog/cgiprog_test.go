package cgiprog_test

import (
	"io"
	"os"
	"strings"
	"syscall"
	"testing"

	"serverlab/tests/webtest/cgiprog"
)

// The test binary plays the programs, as the suite's does.
func init() {
	if cgiprog.Invoked() {
		syscall.Exit(cgiprog.Main())
	}
}

// TestEmptyArgv starts the programs as the OSTEP server does, with an empty
// argument list: each must still know which program it is and send a whole
// response (a Content-Length: wrk counts a reply without one as an error).
func TestEmptyArgv(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, query, want string }{
		{"spin.cgi", "0", "I spun for 0."},
		{"env.cgi", "a=1", "QUERY_STRING=a=1\n"},
	} {
		path, err := cgiprog.Install(dir, c.name)
		if err != nil {
			t.Fatal(err)
		}
		out := run(t, path, c.query)
		head, body, ok := strings.Cut(out, "\r\n\r\n")
		if !ok || !strings.Contains(head, "Content-Length: ") || !strings.Contains(body, c.want) {
			t.Fatalf("%s started with an empty argument list, QUERY_STRING=%s:\n  want a header with Content-Length "+
				"and %q in the body\n   got %q", c.name, c.query, c.want, out)
		}
	}
}

// run starts path with no arguments at all (not even argv[0]) and returns its
// standard output.
func run(t *testing.T, path, query string) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p, err := os.StartProcess(path, []string{}, &os.ProcAttr{
		Env:   []string{"QUERY_STRING=" + query},
		Files: []*os.File{nil, w, os.Stderr},
	})
	w.Close()
	if err != nil {
		t.Fatalf("starting %s with an empty argv: %v", path, err)
	}
	out, _ := io.ReadAll(r)
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	return string(out)
}
