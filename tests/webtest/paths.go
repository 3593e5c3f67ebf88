package webtest

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/lab"
)

// Paths checks exercise 6.2: a URI maps to a file under the document root
// and never to anything outside it.
func Paths(t *testing.T, impl Impl) {
	k := testkit.New(t, "6.2")
	s := newSite(k)
	s.cgi(k, "cgi-bin/env.cgi")
	if _, err := impl.Resolve(s.root, "/a.txt"); errors.Is(err, lab.ErrNotImplemented) {
		k.Fatalf("Docroot.Open is not implemented yet: %v", err)
	}
	s.write(k, "%41.txt", []byte("a name with a percent sign"))
	check(k, "fifo", func(k *testkit.T) { checkFIFO(k, impl, s) })
	check(k, "resolves", func(k *testkit.T) { checkResolves(k, impl, s) })
	check(k, "refuses", func(k *testkit.T) { checkRefusals(k, impl, s) })
}

// checkResolves: URIs that name files under the root resolve to them.
func checkResolves(k *testkit.T, impl Impl, s *site) {
	k.Helper()
	size := func(name string) int64 { return int64(len(s.files[name])) }
	for _, c := range []struct {
		uri  string
		want Resolved
	}{
		{"/a.txt", Resolved{Path: s.path("a.txt"), Size: size("a.txt")}},
		{"/", Resolved{Path: s.path("index.html"), Size: size("index.html")}},
		{"/sub/", Resolved{Path: s.path("sub/index.html"), Size: size("sub/index.html")}},
		{"/sub/b.html", Resolved{Path: s.path("sub/b.html"), Size: size("sub/b.html")}},
		{"/a.txt?x=1&y=%20", Resolved{Path: s.path("a.txt"), Query: "x=1&y=%20", Size: size("a.txt")}},
		{"/space%20name.txt", Resolved{Path: s.path("space name.txt"), Size: size("space name.txt")}},
		{"/link-in", Resolved{Path: s.path("link-in"), Size: size("a.txt")}},
		{"/huge.bin", Resolved{Path: s.path("huge.bin"), Size: hugeSize}},
		{"/%2541.txt", Resolved{Path: s.path("%41.txt"), Size: size("%41.txt")}}, // decoded once, not twice
		{"/cgi-bin/env.cgi?a=b&c", Resolved{Path: s.path("cgi-bin/env.cgi"), Query: "a=b&c", CGI: true}},
	} {
		got, err := impl.Resolve(s.root, c.uri)
		if c.want.CGI && err == nil {
			c.want.Size = got.Size // the test binary's size: not the point here
		}
		if err != nil || filepath.Clean(got.Path) != c.want.Path || got.Query != c.want.Query ||
			got.CGI != c.want.CGI || got.Size != c.want.Size {
			k.Fatalf("Resolve(%q) with -d %s\n  want %+v\n   got %+v, error %v", c.uri, s.root, c.want, got, err)
		}
	}
}

// checkRefusals: URIs that leave the root, or name nothing servable, are
// refused with the right status.
func checkRefusals(k *testkit.T, impl Impl, s *site) {
	k.Helper()
	for _, c := range []struct {
		uri  string
		code int
		why  string
	}{
		{"/missing.txt", 404, "no such file"},
		{"/sub/missing.html", 404, "no such file"},
		{"/dir/", 404, "a folder without index.html"},
		{"/dir", 403, "a folder is not a regular file"},
		{"/../outside/secret.txt", 403, "'..' leaves the root"},
		{"/sub/../../outside/secret.txt", 403, "'..' leaves the root"},
		{"/sub/../a.txt", 403, "any '..' element is refused"},
		{"/sub/%2e%2e/a.txt", 403, "decode first, then judge: %2e%2e is a '..' element"},
		{"/sub/.%2E/a.txt", 403, "decode first, then judge: .%2E is a '..' element"},
		{"/../../../../../../etc/hostname", 403, "the original served this"},
		{"/%2e%2e/outside/secret.txt", 403, "'..' spelled %2e%2e"},
		{"/%2E%2E/%2e%2E/etc/hostname", 403, "'..' spelled %2E%2E"},
		{"/..%2foutside/secret.txt", 403, "'../' with the slash spelled %2f"},
		{"//etc/hostname", 403, "an absolute path after the first '/'"},
		{"/%2fetc/hostname", 403, "an absolute path spelled %2f"},
		{"etc/hostname", 403, "a URI that does not start with '/'"},
		{"http://localhost/../outside/secret.txt", 403, "an absolute URI"},
		{"/link-out", 403, "a symbolic link to a file outside the root"},
		{"/dirlink-out/secret.txt", 403, "a path through a symbolic link to a folder outside the root"},
	} {
		got, err := impl.Resolve(s.root, c.uri)
		if err == nil || impl.Status(err) != c.code {
			k.Fatalf("Resolve(%q) with -d %s (%s)\n  want an error with status %d\n   got %+v, error %v (status %d)",
				c.uri, s.root, c.why, c.code, got, err, impl.Status(err))
		}
	}
}

// checkFIFO: a named pipe in the document root is refused (403) at once. A
// plain open(2) of a FIFO blocks until some process opens it for writing: a
// server that opens before it checks hangs its worker for good.
func checkFIFO(k *testkit.T, impl Impl, s *site) {
	k.Helper()
	fifo := s.path("fifo")
	err := mkfifo(fifo)
	if errors.Is(err, errors.ErrUnsupported) {
		return // no named pipes on this system
	}
	must(k, err)
	type result struct {
		got Resolved
		err error
	}
	done := make(chan result, 1)
	go func() {
		got, err := impl.Resolve(s.root, "/fifo")
		done <- result{got, err}
	}()
	select {
	case r := <-done:
		if r.err == nil || impl.Status(r.err) != 403 {
			k.Fatalf("Resolve(\"/fifo\"), a named pipe in the root: want an error with status 403 (not a regular file)\n"+
				"   got %+v, error %v (status %d)", r.got, r.err, impl.Status(r.err))
		}
	case <-time.After(testkit.IOTimeout):
		// Unblock the open: a writer arrives (and leaves at once).
		if w, err := testkit.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		<-done
		k.Fatalf("Resolve(\"/fifo\"), a named pipe in the root, did not return within %v: opening a FIFO blocks until "+
			"a writer comes; open with O_NONBLOCK (os.Root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)) and "+
			"refuse anything the open file's Stat does not call regular", testkit.IOTimeout)
	}
}
