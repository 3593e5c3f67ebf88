package webtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/lab"
)

// handlerServer runs a Handler behind a minimal accept loop of the suite's
// own (one goroutine per connection), so that exercises 6.1–6.4 can be
// checked before the chapter has a worker pool.
type handlerServer struct {
	addr   string
	served chan string // the client address of each connection whose ServeConn returned
}

func startHandler(k *testkit.T, impl Impl, cfg Config) *handlerServer {
	k.Helper()
	h, err := impl.NewHandler(cfg)
	if err != nil {
		k.Fatalf("NewHandler(root %s): %v", cfg.Root, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	hs := &handlerServer{addr: ln.Addr().String(), served: make(chan string, 4096)}
	var (
		mu    sync.Mutex
		conns = map[net.Conn]bool{}
		wg    sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				h.ServeConn(ctx, c)
				mu.Lock()
				delete(conns, c)
				mu.Unlock()
				select {
				case hs.served <- c.RemoteAddr().String():
				default:
				}
			}()
		}
	}()
	stop := func() {
		cancel()
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
	}
	k.OnAbort(stop)
	k.Cleanup(func() {
		stop()
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(testkit.IOTimeout):
			k.Errorf("ServeConn did not return within %v after its connection was closed and its context cancelled", testkit.IOTimeout)
			<-done
		}
		h.Close()
	})
	return hs
}

// check runs one check of an exercise as a named subtest with a harness of
// its own, so that every failing check is reported (and can be run alone
// with -run 'TestEx6_1_Parse/limits'), not only the first.
func check(k *testkit.T, name string, f func(k *testkit.T)) {
	k.Helper()
	k.Run(name, func(t *testing.T) { f(testkit.New(t, k.Exercise())) })
}

// waitServed waits until ServeConn has returned for the client connection c.
func (hs *handlerServer) waitServed(k *testkit.T, c net.Conn, what string) {
	k.Helper()
	deadline := time.After(testkit.IOTimeout)
	for {
		select {
		case addr := <-hs.served:
			if addr == c.LocalAddr().String() {
				return
			}
		case <-deadline:
			k.Fatalf("%s: ServeConn did not return within %v", what, testkit.IOTimeout)
		}
	}
}

// startServer builds the whole server and serves it on 127.0.0.1:0. Gates
// that hold workers are opened at cleanup before the server is closed.
func startServer(k *testkit.T, impl Impl, cfg Config, g *gates) *testkit.Server {
	k.Helper()
	return startServerOn(k, impl, cfg, g, nil)
}

// startServerOn is startServer on the listener ln (nil: a new one on
// 127.0.0.1:0).
func startServerOn(k *testkit.T, impl Impl, cfg Config, g *gates, ln net.Listener) *testkit.Server {
	k.Helper()
	raw, err := impl.NewServer(cfg)
	if errors.Is(err, lab.ErrNotImplemented) {
		k.Fatalf("building the server: %v (an exercise this check needs is not done yet)", err)
	}
	if err != nil {
		k.Fatalf("NewServer(%+v): %v", cfg, err)
	}
	var srv *testkit.Server
	if ln != nil {
		srv = k.ServeListener(raw, ln)
	} else {
		srv = k.Serve(raw)
	}
	if g != nil {
		k.OnAbort(g.openAll)
		k.Cleanup(g.openAll) // runs before the server's Close: cleanups run last-in first-out
	}
	return srv
}

// needServer fails a check early, with a clear message, when the server is
// not serving because Serve is still a stub.
func needServer(k *testkit.T, srv *testkit.Server, s *site) {
	k.Helper()
	resp, err := exchange(srv.Addr, "GET /a.txt HTTP/1.0\r\n\r\n")
	if err == nil && resp.status == "HTTP/1.0 200 OK" {
		return
	}
	if err, stopped := srv.Stopped(); stopped && errors.Is(err, lab.ErrNotImplemented) {
		k.Fatalf("this check needs the server of exercise 6.5: Serve returned %v", err)
	}
	if err == nil && strings.HasPrefix(resp.status, "HTTP/1.0 500") {
		k.Fatalf("this check needs earlier exercises: GET /a.txt was answered with %q\n%s", resp.status, resp.body)
	}
	k.Fatalf("GET /a.txt on a fresh server: want 200, got %s", describe(resp, err))
}

// gates hold workers: Config.Started waits at the gate of its URI until the
// check opens it.
type gates struct {
	mu    sync.Mutex
	gate  map[string]chan struct{}
	all   chan struct{}
	once  sync.Once
	onces map[string]*sync.Once
}

func newGates(uris ...string) *gates {
	g := &gates{gate: map[string]chan struct{}{}, all: make(chan struct{}), onces: map[string]*sync.Once{}}
	for _, u := range uris {
		g.gate[u] = make(chan struct{})
		g.onces[u] = new(sync.Once)
	}
	return g
}

// wait blocks while uri's gate is shut.
func (g *gates) wait(uri string) {
	g.mu.Lock()
	c := g.gate[uri]
	g.mu.Unlock()
	if c == nil {
		return
	}
	select {
	case <-c:
	case <-g.all:
	}
}

func (g *gates) open(uri string) { g.onces[uri].Do(func() { close(g.gate[uri]) }) }
func (g *gates) openAll()        { g.once.Do(func() { close(g.all) }) }

// recorder records hook calls in order and lets a check wait for them.
type recorder struct {
	mu      sync.Mutex
	events  []string
	changed chan struct{}
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{}, 1)} }

func (r *recorder) add(s string) {
	r.mu.Lock()
	r.events = append(r.events, s)
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

// waitFor waits until the events satisfy ok, and returns them.
func (r *recorder) waitFor(k *testkit.T, what string, ok func([]string) bool) []string {
	k.Helper()
	deadline := time.After(testkit.IOTimeout)
	for {
		if ev := r.list(); ok(ev) {
			return ev
		}
		select {
		case <-r.changed:
		case <-deadline:
			k.Fatalf("waited %v for %s; the hook calls so far: %q", testkit.IOTimeout, what, r.list())
		}
	}
}

// waitCount waits for at least n events.
func (r *recorder) waitCount(k *testkit.T, n int, what string) []string {
	k.Helper()
	return r.waitFor(k, what, func(ev []string) bool { return len(ev) >= n })
}

// waitEvent waits for the event e.
func (r *recorder) waitEvent(k *testkit.T, e, what string) []string {
	k.Helper()
	return r.waitFor(k, what, func(ev []string) bool { return contains(ev, e) })
}

// quiet checks that no event beyond the first n arrives within window. A
// correct server can never fail it; it gives a wrong server (one that does not
// wait) that long to show itself.
func (r *recorder) quiet(window time.Duration) ([]string, bool) {
	n := len(r.list())
	deadline := time.After(window)
	for {
		select {
		case <-r.changed:
			if ev := r.list(); len(ev) > n {
				return ev, false
			}
		case <-deadline:
			return r.list(), true
		}
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// response is what a server sent on one connection, until it closed it.
type response struct {
	raw    []byte
	status string   // the status line
	header []string // the header lines after it
	body   []byte
}

// get returns the value of the first header line called name.
func (r response) get(name string) (string, bool) {
	for _, h := range r.header {
		if n, v, ok := strings.Cut(h, ":"); ok && strings.EqualFold(n, name) {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// exchange sends req on a new connection and reads everything the server
// sends until it closes the connection.
func exchange(addr, req string) (response, error) {
	c, err := net.DialTimeout("tcp", addr, testkit.IOTimeout)
	if err != nil {
		return response{}, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(testkit.IOTimeout))
	if _, err := io.WriteString(c, req); err != nil {
		return response{}, err
	}
	return readResponse(c)
}

// readResponse reads until end-of-file and splits the response.
func readResponse(c net.Conn) (response, error) {
	raw, err := io.ReadAll(deadlined{c})
	if err != nil && !testkit.IsClosed(err) {
		return response{raw: raw}, err
	}
	return parseResponse(raw), nil
}

// deadlined renews a connection's read deadline before every Read.
type deadlined struct{ c net.Conn }

func (d deadlined) Read(p []byte) (int, error) {
	d.c.SetReadDeadline(time.Now().Add(testkit.IOTimeout))
	return d.c.Read(p)
}

func parseResponse(raw []byte) response {
	r := response{raw: raw}
	head, body, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
	if !ok {
		r.status, _, _ = strings.Cut(string(raw), "\r\n")
		return r
	}
	lines := strings.Split(string(head), "\r\n")
	r.status, r.header, r.body = lines[0], lines[1:], body
	return r
}

// describe shows a response (or the error instead of one) in a failure.
func describe(r response, err error) string {
	if err != nil {
		return fmt.Sprintf("%s (after %d bytes: %s)", testkit.Describe(err), len(r.raw), clip(r.raw))
	}
	if len(r.raw) == 0 {
		return "nothing: the server closed the connection without a response"
	}
	return clip(r.raw)
}

// clip quotes at most 300 bytes of b.
func clip(b []byte) string {
	if len(b) > 300 {
		return testkit.Quote(b[:300]) + fmt.Sprintf("… (%d bytes)", len(b))
	}
	return testkit.Quote(b)
}

// get fetches uri with a plain HTTP/1.0 request and fails the check if there
// is no response.
func get(k *testkit.T, addr, uri string) response {
	k.Helper()
	req := "GET " + uri + " HTTP/1.0\r\n\r\n"
	resp, err := exchange(addr, req)
	if err != nil {
		k.Fatalf("sent %q\n  want a response, got %s", req, describe(resp, err))
	}
	return resp
}

// reasons are the status lines docs/protocols.md §4 prescribes.
var reasons = map[int]string{
	200: "HTTP/1.0 200 OK",
	400: "HTTP/1.0 400 Bad Request",
	403: "HTTP/1.0 403 Forbidden",
	404: "HTTP/1.0 404 Not found",
	408: "HTTP/1.0 408 Request Timeout",
	500: "HTTP/1.0 500 Internal Server Error",
	501: "HTTP/1.0 501 Not Implemented",
}

// expectError checks an error response: the exact status line, an HTML page,
// and a Content-Length that matches it.
func expectError(k *testkit.T, sent string, resp response, code int) {
	k.Helper()
	if resp.status != reasons[code] {
		k.Fatalf("sent %q\n  want status line %q\n   got %s", sent, reasons[code], describe(resp, nil))
	}
	checkLength(k, sent, resp)
	if ct, _ := resp.get("Content-Type"); ct != "text/html" || len(resp.body) == 0 {
		k.Fatalf("sent %q\n  want a text/html page naming the problem\n   got %s", sent, describe(resp, nil))
	}
}

// checkLength checks that Content-Length is present and equals the body's
// length.
func checkLength(k *testkit.T, sent string, resp response) {
	k.Helper()
	cl, ok := resp.get("Content-Length")
	n, err := strconv.Atoi(cl)
	if !ok || err != nil || n != len(resp.body) {
		k.Fatalf("sent %q\n  want Content-Length equal to the body's %d bytes\n   got Content-Length %q in %s",
			sent, len(resp.body), cl, describe(resp, nil))
	}
}

// staticHeader is the exact header of a 200 response for a file.
func staticHeader(size int, ctype string) string {
	return fmt.Sprintf("HTTP/1.0 200 OK\r\nServer: OSTEP WebServer\r\nContent-Length: %d\r\nContent-Type: %s\r\n\r\n", size, ctype)
}

// expectFile checks a 200 response byte for byte.
func expectFile(k *testkit.T, sent string, resp response, content []byte, ctype string) {
	k.Helper()
	want := append([]byte(staticHeader(len(content), ctype)), content...)
	if !bytes.Equal(resp.raw, want) {
		k.Fatalf("sent %q\n  want %s\n   got %s", sent, clip(want), describe(resp, nil))
	}
}

// countingListener counts the connections the server has accepted.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}
