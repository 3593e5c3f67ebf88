package webtest

import (
	"errors"
	"io"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/lab"
)

// needResolve fails a check that serves files while exercises 6.1 and 6.2
// are stubs.
func needResolve(k *testkit.T, impl Impl, s *site) {
	k.Helper()
	if _, err := parse(impl, strings.NewReader("GET / HTTP/1.0\r\n\r\n")); errors.Is(err, lab.ErrNotImplemented) {
		k.Fatalf("serving a file needs an earlier exercise (6.1, ReadRequest): %v", err)
	}
	if _, err := impl.Resolve(s.root, "/a.txt"); errors.Is(err, lab.ErrNotImplemented) {
		k.Fatalf("serving a file needs an earlier exercise (6.2, Docroot.Open): %v", err)
	}
}

// Static checks exercise 6.3: the exact 200 response of docs/protocols.md §4 for
// every kind of file, and large files streamed rather than read into memory.
func Static(t *testing.T, impl Impl) {
	k := testkit.New(t, "6.3")
	s := newSite(k)
	needResolve(k, impl, s)
	hs := startHandler(k, impl, Config{Root: s.root})
	check(k, "files", func(k *testkit.T) { checkFiles(k, hs, s) })
	check(k, "request-headers", func(k *testkit.T) { checkRequestHeaders(k, hs, s) })
	check(k, "errors", func(k *testkit.T) { checkStaticErrors(k, hs) })
	check(k, "streamed", func(k *testkit.T) { checkStreamed(k, hs) })
}

// checkFiles: every kind of file gets its exact 200 response.
func checkFiles(k *testkit.T, hs *handlerServer, s *site) {
	k.Helper()
	for _, c := range []struct {
		uri, name, ctype string
	}{
		{"/a.txt", "a.txt", "text/plain"},
		{"/page.html", "page.html", "text/html"},
		{"/pic.gif", "pic.gif", "image/gif"},
		{"/pic.jpg", "pic.jpg", "image/jpeg"},
		{"/data.png", "data.png", "text/plain"},
		{"/pic.gif.txt", "pic.gif.txt", "text/plain"}, // the type is the extension's: what follows the last dot
		{"/html.jpg", "html.jpg", "image/jpeg"},
		{"/noext", "noext", "text/plain"},
		{"/empty.txt", "empty.txt", "text/plain"},
		{"/bin.dat", "bin.dat", "text/plain"},
		{"/", "index.html", "text/html"},
		{"/sub/", "sub/index.html", "text/html"},
		{"/space%20name.txt?q=1", "space name.txt", "text/plain"},
		{"/large.txt", "large.txt", "text/plain"},
	} {
		resp := get(k, hs.addr, c.uri)
		expectFile(k, "GET "+c.uri+" HTTP/1.0", resp, s.files[c.name], c.ctype)
	}
}

// checkRequestHeaders: clients send headers, with either line ending.
func checkRequestHeaders(k *testkit.T, hs *handlerServer, s *site) {
	k.Helper()
	for _, req := range []string{
		"GET /page.html HTTP/1.1\r\nHost: localhost\r\nUser-Agent: curl/8.0\r\nAccept: */*\r\n\r\n",
		"get /page.html HTTP/1.0\nHost: localhost\n\n",
	} {
		resp, err := exchange(hs.addr, req)
		if err != nil {
			k.Fatalf("sent %q\n  want the page, got %s", req, describe(resp, err))
		}
		expectFile(k, req, resp, s.files["page.html"], "text/html")
	}
}

// checkStaticErrors: what cannot be served gets its error page.
func checkStaticErrors(k *testkit.T, hs *handlerServer) {
	k.Helper()
	for _, c := range []struct {
		uri  string
		code int
	}{{"/missing.txt", 404}, {"/../outside/secret.txt", 403}, {"/link-out", 403}, {"/dir", 403}} {
		expectError(k, "GET "+c.uri, get(k, hs.addr, c.uri), c.code)
	}
}

// checkStreamed fetches a 32 MiB file and checks that serving it did not
// allocate anything like its size: it must be streamed (io.Copy, sendfile),
// not read whole into memory. The handler runs in this process, so the
// process's allocation counter tells.
func checkStreamed(k *testkit.T, hs *handlerServer) {
	k.Helper()
	c, err := net.DialTimeout("tcp", hs.addr, testkit.IOTimeout)
	if err != nil {
		k.Fatalf("dial: %v", err)
	}
	defer c.Close()
	var before, after runtime.MemStats
	testkit.ReadMemStats(&before)
	c.SetDeadline(time.Now().Add(testkit.IOTimeout))
	const req = "GET /huge.bin HTTP/1.0\r\n\r\n"
	if _, err := io.WriteString(c, req); err != nil {
		k.Fatalf("sending %q: %v", req, err)
	}
	head := staticHeader(hugeSize, "text/plain")
	got := make([]byte, len(head))
	if _, err := io.ReadFull(deadlined{c}, got); err != nil || string(got) != head {
		k.Fatalf("sent %q\n  want %q\n   got %q (%v)", req, head, got, err)
	}
	n, err := io.Copy(io.Discard, deadlined{c})
	if err != nil && !testkit.IsClosed(err) || n != hugeSize {
		k.Fatalf("sent %q\n  want a %d-byte body, got %d bytes (%v)", req, hugeSize, n, err)
	}
	hs.waitServed(k, c, "after the 32 MiB response")
	testkit.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > hugeSize/4 {
		k.Fatalf("serving a %d MiB file allocated %d MiB: stream it (io.Copy from the open file to the connection), "+
			"never read a whole file into memory", hugeSize>>20, grew>>20)
	}
}
