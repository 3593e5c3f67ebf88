package webtest

import (
	"io"
	"net"
	"os"
	"path"
	"testing"
	"time"

	"serverlab/tests/testkit"
)

// Robustness checks exercise 6.7: the clients that killed or froze the
// original server (an empty connection, a reset in the middle of a response,
// end-of-file inside the header, a slowloris, a client that never reads, a
// thousand at once) leave ours serving, leaking nothing and never spinning.
// With one worker, a worker that spins or hangs on a bad client stops the
// whole server, so "the next request is served" is the test.
func Robustness(t *testing.T, impl Impl) {
	k := testkit.New(t, "6.7")
	s := newSite(k)
	needResolve(k, impl, s)
	for _, sff := range []bool{false, true} {
		cfg := Config{Root: s.root, Threads: 1, Buffers: 16, SFF: sff,
			ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond, CGITimeout: time.Minute}
		srv := startServer(k, impl, cfg, nil)
		needServer(k, srv, s)
		policy := map[bool]string{false: "-s FIFO -t 1", true: "-s SFF -t 1"}[sff]
		name := map[bool]string{false: "FIFO/", true: "SFF/"}[sff]
		check(k, name+"empty-connections", func(k *testkit.T) { checkEmptyConnections(k, srv, s, policy) })
		check(k, name+"eof-in-header", func(k *testkit.T) { checkEOFInHeader(k, srv, s, policy) })
		check(k, name+"reset-mid-response", func(k *testkit.T) { checkResetMidResponse(k, srv, s, policy) })
		check(k, name+"slowloris", func(k *testkit.T) { checkSlowloris(k, srv, s, policy) })
		check(k, name+"non-reader", func(k *testkit.T) { checkNonReader(k, srv, s, policy) })
		srv.Close()
	}
	check(k, "thousand-FIFO", func(k *testkit.T) { checkThousand(k, impl, s, false) })
	check(k, "thousand-SFF", func(k *testkit.T) { checkThousand(k, impl, s, true) })
}

// stillServing checks that the server answers a plain request after a
// hostile one.
func stillServing(k *testkit.T, srv *testkit.Server, s *site, policy, after string) {
	k.Helper()
	resp, err := exchange(srv.Addr, "GET /a.txt HTTP/1.0\r\n\r\n")
	if err != nil || string(resp.raw) != staticHeader(len(s.files["a.txt"]), "text/plain")+string(s.files["a.txt"]) {
		k.Fatalf("%s, after %s: want GET /a.txt served, got %s", policy, after, describe(resp, err))
	}
}

// dial opens a raw connection, closed at cleanup.
func dial(k *testkit.T, addr string) *net.TCPConn {
	k.Helper()
	c, err := net.DialTimeout("tcp", addr, testkit.IOTimeout)
	if err != nil {
		k.Fatalf("dial %s: %v", addr, err)
	}
	k.Cleanup(func() { c.Close() })
	return c.(*net.TCPConn)
}

func checkEmptyConnections(k *testkit.T, srv *testkit.Server, s *site, policy string) {
	k.Helper()
	for i := range 20 {
		c := dial(k, srv.Addr)
		if i%2 == 1 {
			c.SetLinger(0) // a reset instead of an orderly close
		}
		c.Close()
	}
	stillServing(k, srv, s, policy, "20 connections opened and closed without a request (wrk does this)")
}

func checkEOFInHeader(k *testkit.T, srv *testkit.Server, s *site, policy string) {
	k.Helper()
	const req = "GET /a.txt HTTP/1.0\r\nHost: localhost\r\n"
	c := dial(k, srv.Addr)
	c.SetDeadline(time.Now().Add(testkit.IOTimeout))
	if _, err := io.WriteString(c, req); err != nil {
		k.Fatalf("sending %q: %v", req, err)
	}
	c.CloseWrite()
	resp, err := readResponse(c)
	if err != nil || resp.status != reasons[400] {
		k.Fatalf("%s: sent %q and then end-of-file (no empty line)\n  want a 400 response and the connection closed "+
			"(the original spun at 100%% CPU here)\n   got %s", policy, req, describe(resp, err))
	}
	stillServing(k, srv, s, policy, "end-of-file inside the header")
}

func checkResetMidResponse(k *testkit.T, srv *testkit.Server, s *site, policy string) {
	k.Helper()
	for range 3 {
		c := dial(k, srv.Addr)
		c.SetDeadline(time.Now().Add(testkit.IOTimeout))
		io.WriteString(c, "GET /huge.bin HTTP/1.0\r\n\r\n")
		if _, err := io.ReadFull(c, make([]byte, 4096)); err != nil {
			k.Fatalf("%s: GET /huge.bin: want the start of a 32 MiB response, got %s", policy, testkit.Describe(err))
		}
		c.SetLinger(0)
		c.Close()
	}
	stillServing(k, srv, s, policy, "3 clients reset their connections in the middle of a 32 MiB response")
}

// checkSlowloris: a client that sends its header one byte every 50 ms must be
// dropped when the read timeout (500 ms) is up, however often it sends.
func checkSlowloris(k *testkit.T, srv *testkit.Server, s *site, policy string) {
	k.Helper()
	slow := dial(k, srv.Addr)
	io.WriteString(slow, "GET /a.txt HTTP/1.0\r\n")
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			slow.SetWriteDeadline(time.Now().Add(testkit.IOTimeout))
			if _, err := slow.Write([]byte("X")); err != nil {
				return // dropped: what we want
			}
		}
	}()
	defer func() { close(stop); <-done }()
	silent := dial(k, srv.Addr)

	stillServing(k, srv, s, policy, "a slowloris client started sending one header byte every 50 ms, and another "+
		"connected and said nothing (set one read deadline, Config.ReadTimeout = 500ms, for the whole request)")
	slow.SetReadDeadline(time.Now().Add(testkit.IOTimeout))
	resp, err := readResponse(slow)
	if err != nil || resp.status != reasons[408] {
		k.Fatalf("%s: a slowloris client (one header byte every 50 ms) must be answered %q and dropped when the "+
			"read timeout of 500ms for the whole request head is up (the handler turns the deadline into a 408 "+
			"when part of a request has arrived)\n   got %s", policy, reasons[408], describe(resp, err))
	}
	silent.SetReadDeadline(time.Now().Add(testkit.IOTimeout))
	got, err := io.ReadAll(silent)
	if err != nil && !testkit.IsClosed(err) {
		k.Fatalf("%s: want a client that connected and sent nothing dropped after the read timeout of 500ms; got %s",
			policy, testkit.Describe(err))
	}
	if len(got) > 0 {
		k.Fatalf("%s: a client that connected and sent nothing got %d bytes when the read timeout was up: %s\n"+
			"A connection that sent not one byte is closed without a word (a browser's or wrk's speculative "+
			"connection); only one that sent part of a request is answered 408", policy, len(got), clip(got))
	}
}

// checkNonReader: a client that asks for a big file and never reads it must
// not hold a worker beyond the write timeout.
func checkNonReader(k *testkit.T, srv *testkit.Server, s *site, policy string) {
	k.Helper()
	c := dial(k, srv.Addr)
	c.SetReadBuffer(4096)
	io.WriteString(c, "GET /huge.bin HTTP/1.0\r\n\r\n")
	stillServing(k, srv, s, policy, "a client asked for a 32 MiB file and never read it "+
		"(set a write deadline, Config.WriteTimeout = 500ms)")
}

// checkThousand: 1000 connections at once with -b 1000 are all served, and
// when the server is closed every file descriptor it opened is closed too.
func checkThousand(k *testkit.T, impl Impl, s *site, sff bool) {
	k.Helper()
	const n = 1000
	policy := map[bool]string{false: "-s FIFO -t 8 -b 1000", true: "-s SFF -t 8 -b 1000"}[sff]
	fdsBefore := openFDs()
	srv := startServer(k, impl, Config{Root: s.root, Threads: 8, Buffers: n, SFF: sff, ReadTimeout: 10 * time.Second}, nil)
	names := []string{"a.txt", "small.txt", "page.html", "sub/b.html", "empty.txt", "dir", "missing.txt"}
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.DialTimeout("tcp", srv.Addr, testkit.IOTimeout)
		if err != nil {
			k.Fatalf("%s: dialling connection %d of %d: %v", policy, i+1, n, err)
		}
		defer c.Close()
		conns[i] = c
	}
	for i, c := range conns {
		c.SetDeadline(time.Now().Add(2 * testkit.IOTimeout))
		if _, err := io.WriteString(c, "GET /"+names[i%len(names)]+" HTTP/1.0\r\n\r\n"); err != nil {
			k.Fatalf("%s: sending request %d of %d: %v", policy, i+1, n, err)
		}
	}
	for i, c := range conns {
		name := names[i%len(names)]
		raw, err := io.ReadAll(c)
		want := staticHeader(len(s.files[name]), typeOf(name)) + string(s.files[name])
		if name == "dir" || name == "missing.txt" {
			want = map[string]string{"dir": reasons[403], "missing.txt": reasons[404]}[name]
			raw = raw[:min(len(raw), len(want))]
		}
		if err != nil || string(raw) != want {
			k.Fatalf("%s, %d connections at once: GET /%s (connection %d)\n  want %s\n   got %s",
				policy, n, name, i+1, clip([]byte(want)), describe(parseResponse(raw), err))
		}
		c.Close()
	}
	srv.Close()
	if after := openFDs(); after > fdsBefore {
		k.Fatalf("%s: %d file descriptors were open before the server started and %d after it closed: "+
			"close every file and connection (also on errors)", policy, fdsBefore, after)
	}
}

// openFDs counts the server's process's open file descriptors that are
// still open once listed: not the one that read the list, which is the
// server's own process's under go test, and is closed by then.
func openFDs() int {
	dir := testkit.ServerProc() + "/fd"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if target, err := os.Readlink(dir + "/" + e.Name()); err != nil || target == dir {
			continue
		}
		n++
	}
	return n
}

// typeOf is the Content-Type docs/protocols.md §4 gives a file name.
func typeOf(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html"
	case ".gif":
		return "image/gif"
	case ".jpg":
		return "image/jpeg"
	}
	return "text/plain"
}
