package chattest

import (
	"fmt"
	"io"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/wire"
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen: %v", err)
	}
	slow := &slowClosingListener{Listener: ln}
	mark := testkit.MarkGoroutines()
	e := startOn(k, impl, Config{LoginTimeout: time.Minute, MaxPending: 64 << 20}, slow, names...)

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
	half.Write(testkit.Encode(loginFrame("user00", password("user00")))[:30], "the first 30 bytes of a LOGIN")
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

	closeWithin(k, e, clients, slow, mark)
	// Close has returned: every connection is closed already, so each client
	// reads what was buffered for it and then the end of the stream at once.
	// (A Close that returns before the server has stopped leaves some open.)
	const atOnce = 500 * time.Millisecond
	for i, c := range clients {
		c.NetConn().SetReadDeadline(time.Now().Add(atOnce))
		if _, err := io.Copy(io.Discard, c.NetConn()); err != nil && !testkit.IsClosed(err) {
			k.Fatalf("after Close returned, client %d of %d was still connected: want end of stream within %v, got %s.\n"+
				"hint: Close must close every connection, logged in or not, and return only once the server has "+
				"stopped (every call of it)", i+1, len(clients), atOnce, testkit.Describe(err))
		}
	}
	if c, err := net.DialTimeout("tcp", e.srv.Addr, testkit.IOTimeout); err == nil {
		c.Close()
		k.Fatalf("after Close returned, a new connection to %s was accepted: Close must close the listener", e.srv.Addr)
	}
	closeAgain(k, e)
	e.srv.Close() // and wait for Serve's answer: lab.ErrServerClosed
	checkCloseBeforeServe(k, impl)
	checkHalfClose(k, impl)
	checkHalfClosedNotReading(k, impl)
	if impl.GoroutinePerClient { // an event loop has a retry of its own, checked by its chapter
		fresh, err := impl.NewServer(Config{UsersPath: filepath.Join(k.TempDir(), "users.txt"), Logger: testkit.Logger()})
		if err != nil {
			k.Fatalf("NewServer: %v", err)
		}
		k.CheckCloseDuringBackoff(fresh)
	}
	k.CheckContract(chatContract(k, impl)) // servecontract.go
}

// maxProbes is how many probe users the contract's users file holds; the
// probes take them in turn.
const maxProbes = 4

func probeName(i int) string {
	if i == 0 {
		return "probe"
	}
	return fmt.Sprintf("probe%d", i+1)
}

// contractLogin logs in as name on a new connection to addr.
func contractLogin(k *testkit.T, addr, name string) *testkit.Conn {
	k.Helper()
	c := k.DialAddr(addr)
	c.SendFrame(loginFrame(name, password(name)))
	c.ExpectFrame(loginReply(name, replyOK))
	return c
}

// brokenServer stands for a server that could not be built: every call
// reports why.
type brokenServer struct{ err error }

func (b brokenServer) Serve(ln net.Listener) error { ln.Close(); return b.err }
func (b brokenServer) Close() error                { return b.err }

// checkHalfClose: a client that sends its requests and then closes its side
// of the connection (shutdown(SHUT_WR), as a script piping into nc does) is
// still reading: every reply to its requests must reach it before the
// server closes the connection.
func checkHalfClose(k *testkit.T, impl Impl) {
	k.Helper()
	e := start(k, impl, Config{}, "alice")
	alice := e.loginAs("alice")
	const n = 50
	var burst []byte
	for range n {
		burst = append(burst, testkit.Encode(privateFrame("alice", "nobody", []byte("are you there?")))...)
	}
	alice.Write(burst, fmt.Sprintf("%d PRIVATE_MSGs to nobody, in one write", n))
	alice.CloseWrite()
	for i := range n {
		got, err := alice.TryReadFrame()
		if err != nil {
			k.Fatalf("alice sent %d PRIVATE_MSGs to an offline user and closed her side of the connection "+
				"(CloseWrite); she got %d of the %d answers, then %s.\nWant every answer already queued sent "+
				"before the server closes: on end of stream, stop reading, let the writer send what is queued "+
				"(with a deadline), then close", n, i, n, testkit.Describe(err))
		}
		if want := privateFrame(wire.ServerName, "alice", []byte(notOnline)); testkit.FrameDiff(want, got) != "" {
			k.Fatalf("answer %d of %d after alice's half-close: want %v, got %v", i+1, n, want, got)
		}
	}
	alice.ExpectClosed()
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
		if c.TryWrite(testkit.Encode(f), "a broadcast") != nil {
			if i < 100 {
				close(started)
			}
			return
		}
	}
}

// closeWithin calls Close twice at once, as two goroutines of a program
// may, and returns when the first call returns (the caller then checks that
// the server has stopped). Each call must return only after the server has
// closed its listener, which ln makes slow: a Close that does not wait for
// the server to stop, or a second Close that returns at once because the
// first is under way, returns before.
func closeWithin(k *testkit.T, e *env, clients []*testkit.Conn, ln *slowClosingListener, mark testkit.GoroutineMark) {
	k.Helper()
	raw := e.raw
	type result struct {
		err     error
		early   bool   // the listener was not closed yet
		running string // the server's goroutines still running
	}
	closed := make(chan result, 2)
	for range 2 {
		go func() {
			err := raw.Close()
			early := !ln.done.Load()
			closed <- result{err, early, mark.ServerGoroutines()}
		}()
	}
	check := func(r result, which string) {
		k.Helper()
		if r.err != nil {
			k.Errorf("%s of two racing Close calls returned %v; want nil", which, r.err)
		}
		if r.early {
			k.Errorf("%s of two racing Close calls returned before the server had closed its listener: every "+
				"Close must wait until the server has stopped (Serve and every goroutine it started)", which)
		} else if r.running != "" {
			// The staller's queued replies keep the server busy for its
			// close grace: a second Close that returns at once returns now.
			k.Errorf("%s of two racing Close calls returned while the server's goroutines still ran:\n%s\n"+
				"every Close must wait until the server has stopped (Serve and every goroutine it started), "+
				"also a second call that finds the server closing", which, r.running)
		}
	}
	k.Cleanup(func() {
		select {
		case r := <-closed:
			check(r, "the second")
		case <-time.After(testkit.IOTimeout):
			k.Errorf("the second of two racing Close calls did not return within %v", testkit.IOTimeout)
		}
	})
	select {
	case r := <-closed:
		check(r, "the first")
	case <-time.After(testkit.IOTimeout):
		for _, c := range clients {
			c.Close() // let Close finish, so the check can end
		}
		<-closed
		k.Fatalf("Close did not return within %v with %d clients connected (logged in, silent, half-way "+
			"through LOGIN, one not reading): Close must close every connection so the goroutines blocked on "+
			"them return, then wait for them", testkit.IOTimeout, len(clients))
	}
}

// slowClosingListener takes a moment to close (fault injection: a slow
// close), and records when it has. It hands out its socket, for a server
// that accepts on it directly (chapter 05's event loop).
type slowClosingListener struct {
	net.Listener
	once sync.Once
	done atomic.Bool
}

func (l *slowClosingListener) Close() error {
	l.once.Do(func() {
		time.Sleep(100 * time.Millisecond) // fault injection: a listener slow to close, not synchronisation
		l.Listener.Close()
		l.done.Store(true)
	})
	return nil
}

func (l *slowClosingListener) SyscallConn() (syscall.RawConn, error) {
	return l.Listener.(syscall.Conn).SyscallConn()
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

// checkCloseBeforeServe: a server closed before it serves refuses to start.
func checkCloseBeforeServe(k *testkit.T, impl Impl) {
	k.Helper()
	srv, err := impl.NewServer(Config{UsersPath: k.TempDir() + "/users.txt"})
	if err != nil {
		k.Fatalf("NewServer: %v", err)
	}
	k.CheckServeAfterClose(srv)
}
