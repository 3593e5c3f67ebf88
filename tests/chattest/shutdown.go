package chattest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/lab"
)

// Shutdown checks exercise 2.6: Close, with many clients connected in every
// state, returns promptly, closes every connection, makes Serve return
// lab.ErrServerClosed, and leaves no goroutine behind (the leak check runs
// after the check).
func Shutdown(t *testing.T, impl Impl) {
	k := testkit.New(t, "2.6")
	const loggedIn = 40
	var names []string
	for i := range loggedIn {
		names = append(names, fmt.Sprintf("user%02d", i))
	}
	names = append(names, "sender", "staller")
	// A minute to log in and a large outbox: nothing but Close will end these
	// connections.
	e := start(k, impl, Config{LoginTimeout: time.Minute, MaxPending: 64 << 20}, names...)

	var clients []*testkit.Conn
	for _, name := range names[:loggedIn] {
		clients = append(clients, e.loginAs(name))
	}
	staller := e.loginAs("staller") // never reads: its writer, if any, blocks on a full socket
	clients = append(clients, staller)
	for range 5 {
		clients = append(clients, k.Dial(e.srv)) // connected, never logged in
	}
	half := k.Dial(e.srv)
	half.Write(encode(loginFrame("user00", password("user00")))[:30], "the first 30 bytes of a LOGIN")
	clients = append(clients, half)

	// A sender broadcasts until the server goes away, so Close comes in the
	// middle of traffic. It has sent some before Close is called.
	sender := e.loginAs("sender")
	clients = append(clients, sender)
	started, stopped := make(chan struct{}), make(chan struct{})
	go broadcastUntilClosed(sender, started, stopped)
	k.Cleanup(func() { <-stopped })
	select {
	case <-started:
	case <-time.After(testkit.IOTimeout):
		k.Fatalf("the sender could not broadcast 100 frames within %v", testkit.IOTimeout)
	}

	closeWithin(k, e, clients, len(names))
	for i, c := range clients {
		if _, err := io.Copy(io.Discard, c.Reader()); err != nil && !testkit.IsClosed(err) {
			k.Fatalf("after Close returned, client %d of %d was still connected: want end of stream, got %s.\n"+
				"hint: Close must close every connection, logged in or not", i+1, len(clients), testkit.Describe(err))
		}
	}
	if c, err := net.DialTimeout("tcp", e.srv.Addr, testkit.IOTimeout); err == nil {
		c.Close()
		k.Fatalf("after Close returned, a new connection to %s was accepted: Close must close the listener", e.srv.Addr)
	}
	closeAgain(k, e)
	e.srv.Close() // and wait for Serve's answer: lab.ErrServerClosed
	checkCloseBeforeServe(k, impl)
}

// broadcastUntilClosed broadcasts up to 500 frames of 1 KiB from c, until a
// write fails. It closes started after 100 frames and stopped when it returns.
func broadcastUntilClosed(c *testkit.Conn, started, stopped chan struct{}) {
	defer close(stopped)
	for i := 0; i < 500; i++ {
		if i == 100 {
			close(started)
		}
		f := broadcastFrame("sender", everyone, fmt.Appendf(make([]byte, 0, 1024), "%01000d", i))
		if c.TryWrite(encode(f), "a broadcast") != nil {
			if i < 100 {
				close(started)
			}
			return
		}
	}
}

// closeWithin calls Close and fails the check unless it returns, and Serve
// with it, within IOTimeout.
func closeWithin(k *testkit.T, e *env, clients []*testkit.Conn, users int) {
	k.Helper()
	raw := e.raw
	closed := make(chan error, 1)
	go func() { closed <- raw.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			k.Fatalf("Close with %d clients connected: %v", len(clients), err)
		}
	case <-time.After(testkit.IOTimeout):
		for _, c := range clients {
			c.Close() // let Close finish, so the check can end
		}
		<-closed
		k.Fatalf("Close did not return within %v with %d clients connected (logged in, silent, half-way "+
			"through LOGIN, one not reading): Close must close every connection so the goroutines blocked on "+
			"them return, then wait for them", testkit.IOTimeout, len(clients))
	}
	if left := goroutinesOf(raw); len(left) > 0 {
		k.Fatalf("when Close returned, %d goroutines of the server were still running:\n%s\n"+
			"hint: Close must wait (a sync.WaitGroup) for Serve and for every goroutine the server started, "+
			"after closing the connections they block on", len(left), strings.Join(left, "\n"))
	}
}

// goroutinesOf returns a line for each goroutine that is running code of
// srv's package (or of a package below it): the function it is in, and where. It is called the moment
// Close returns, when there must be none.
//
// One state is left out: a goroutine whose innermost frame is the closing
// brace of a function of the server has finished its work and is only
// returning (a correct server's goroutine can be caught there, between its
// wg.Done and its exit).
func goroutinesOf(srv lab.Server) []string {
	t := reflect.TypeOf(srv)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	pkg := t.PkgPath()
	ours := func(frame string) bool { // the package, or one below it
		return strings.HasPrefix(frame, pkg+".") || strings.HasPrefix(frame, pkg+"/")
	}
	var found []string
	for _, g := range strings.Split(allStacks(), "\n\n") {
		lines := strings.Split(g, "\n")
		for i := 1; i+1 < len(lines); i += 2 {
			if !ours(lines[i]) {
				continue
			}
			if i == 1 && atClosingBrace(lines[i+1]) {
				break
			}
			found = append(found, "  "+lines[0]+" in "+lines[i]+" at "+strings.TrimSpace(lines[i+1]))
			break
		}
	}
	return found
}

// allStacks is runtime.Stack of every goroutine.
func allStacks() string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// atClosingBrace reports whether a stack trace location ("\t/path/file.go:160
// +0x78a") is a line that holds only a closing brace.
func atClosingBrace(location string) bool {
	loc, _, _ := strings.Cut(strings.TrimSpace(location), " ")
	i := strings.LastIndexByte(loc, ':')
	if i < 0 {
		return false
	}
	n, err := strconv.Atoi(loc[i+1:])
	if err != nil {
		return false
	}
	src, err := os.ReadFile(loc[:i])
	if err != nil {
		return false
	}
	lines := strings.Split(string(src), "\n")
	if n < 1 || n > len(lines) {
		return false
	}
	line := strings.TrimSpace(lines[n-1])
	return line == "}" || line == "}()"
}

func closeAgain(k *testkit.T, e *env) {
	k.Helper()
	again := make(chan error, 1)
	go func() { again <- e.raw.Close() }()
	select {
	case err := <-again:
		if err != nil {
			k.Errorf("a second Close returned %v; want nil (Close is idempotent)", err)
		}
	case <-time.After(testkit.IOTimeout):
		k.Fatalf("a second Close did not return within %v", testkit.IOTimeout)
	}
}

// checkCloseBeforeServe: Serve on a server that is already closed returns
// lab.ErrServerClosed at once, as net/http.Server does.
func checkCloseBeforeServe(k *testkit.T, impl Impl) {
	k.Helper()
	srv, err := impl.NewServer(Config{UsersPath: k.TempDir() + "/users.txt"})
	if err != nil {
		k.Fatalf("NewServer: %v", err)
	}
	if err := srv.Close(); err != nil {
		k.Fatalf("Close before Serve: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen: %v", err)
	}
	defer ln.Close()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		if !errors.Is(err, lab.ErrServerClosed) {
			k.Errorf("Serve after Close returned %v; want lab.ErrServerClosed", err)
		}
	case <-time.After(testkit.IOTimeout):
		ln.Close()
		<-served
		k.Fatalf("Serve after Close did not return within %v; want lab.ErrServerClosed at once", testkit.IOTimeout)
	}
}
