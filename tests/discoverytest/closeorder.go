package discoverytest

import (
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"serverlab/tests/judge"
	"serverlab/tests/testkit"
	"serverlab/tools/given/lab"
	"serverlab/tools/given/users"
	"serverlab/tools/given/wire"
)

// contract is the server contract of chapter 01 (docs/servers.md): a fresh
// server on a scratch users file, probed with one registration.
func contract(k *testkit.T, impl Impl) testkit.Contract {
	return testkit.Contract{
		New: func(log *slog.Logger) lab.Server {
			srv, err := impl.NewServer(Config{UsersPath: filepath.Join(k.TempDir(), "users.txt"), Timeout: time.Minute, Logger: log})
			if err != nil {
				return brokenServer{err}
			}
			return srv
		},
		Probe: func(k *testkit.T, addr string) {
			c := k.DialAddr(addr)
			c.SendFrame(registration("probe", "pw"))
			c.ExpectFrame(answer("probe", "OK"))
		},
	}
}

// checkServeOwnership: TODO(ex 1.4) asks two things of Serve and Close
// that only an order shows, so 1.4 checks them itself (1.6 checks the whole
// contract again): a second Serve while one serves is refused, Close closes
// the store only once Serve has stopped, and a connection is forgotten
// once served, however its handling ended.
func checkServeOwnership(k *testkit.T, impl Impl) {
	k.Helper()
	k.CheckSecondServe(contract(k, impl))
	checkStoreClosedLast(k, impl)
	checkConnForgotten(k, impl)
}

// checkStoreClosedLast: Close waits for Serve, then closes the store. The
// server's answer to a registration is held in its Write (the user is on
// disk by then) while Close runs; once the server has settled (Close waits
// for Serve, Serve for the Write) the users file must still be open. A
// Close that closes the store first leaves a Serve running on a closed
// store: in this iterative server the store's own lock hides it, in the next
// chapters' concurrent ones it does not.
func checkStoreClosedLast(k *testkit.T, impl Impl) {
	k.Helper()
	var file atomic.Pointer[closeRecordingFile] // set by the open the server calls
	open := func(p string) (users.AppendFile, error) {
		f, err := openAppend(p)
		if err != nil {
			return nil, err
		}
		rf := &closeRecordingFile{AppendFile: f}
		file.Store(rf)
		return rf, nil
	}
	raw, _ := newServer(k, impl, Config{Timeout: time.Minute, OpenUsers: open})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen on 127.0.0.1:0: %v", err)
	}
	hl := &holdingListener{Listener: ln, writing: make(chan struct{}, 1), release: make(chan struct{})}
	k.OnAbort(hl.let)
	defer hl.let()
	srv := k.ServeListener(raw, hl)
	c := k.Dial(srv)
	c.SendFrame(registration("held", "pw"))
	select {
	case <-hl.writing:
	case <-time.After(testkit.IOTimeout):
		k.Fatalf("sent a registration of held; the server had not written an answer %v later", testkit.IOTimeout)
	}
	closed := make(chan error, 1)
	go func() { closed <- raw.Close() }()
	judge.Settle(testkit.IOTimeout) // Close waits for Serve, Serve for its Write
	f := file.Load()
	early := f != nil && f.closed.Load()
	hl.let()
	select {
	case <-closed:
	case <-time.After(testkit.IOTimeout):
		k.Fatalf("Close was called while the server wrote its answer to held; the write was let go, and Close "+
			"had not returned %v later", testkit.IOTimeout)
	}
	if early {
		k.Fatalf("sent: a registration of held, then Close while the server's answer was still being written\n" +
			"expected: the users file closed only after Serve has returned\n" +
			"     got: the users file closed while Serve was still serving held\n" +
			"likely cause: Close closes the store before it waits for Serve (s.serve.Wait()): wait first, " +
			"then close the store, so that no Serve still running uses a closed store")
	}
}

// closeRecordingFile is a users file that records its Close.
type closeRecordingFile struct {
	users.AppendFile
	closed atomic.Bool
}

func (f *closeRecordingFile) Close() error {
	f.closed.Store(true)
	return f.AppendFile.Close()
}

// holdingListener hands out connections whose Writes wait until let is
// called (fault injection: a client that reads slowly), and signals the
// first Write on writing.
type holdingListener struct {
	net.Listener
	writing chan struct{}
	release chan struct{}
	once    sync.Once
}

func (l *holdingListener) let() { l.once.Do(func() { close(l.release) }) }

func (l *holdingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &heldConn{Conn: c, l: l}, nil
}

type heldConn struct {
	net.Conn
	l *holdingListener
}

// Write waits for let, whatever happens to the connection meanwhile: a
// Close of the server must not be what frees it, so that the order of
// Close's steps shows.
func (c *heldConn) Write(p []byte) (int, error) {
	select {
	case c.l.writing <- struct{}{}:
	default:
	}
	select {
	case <-c.l.release:
	case <-time.After(testkit.WatchdogTimeout):
	}
	return c.Conn.Write(p)
}

// checkConnForgotten: a connection is recorded for Close while it is served
// and forgotten after, whatever way its handling ends (TODO(ex 1.4)). A
// client's LOGIN is refused without an answer; once the server has closed
// that connection and settled, Close must not reach it again. A server that
// forgets the connection only on the path that answers keeps the refused one
// in s.conn, and its Close closes a connection it no longer serves (were the
// descriptor reused, someone else's).
func checkConnForgotten(k *testkit.T, impl Impl) {
	k.Helper()
	raw, _ := newServer(k, impl, Config{Timeout: time.Minute})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen on 127.0.0.1:0: %v", err)
	}
	cl := &closeCountingListener{Listener: ln, closed: make(chan struct{}, 1)}
	srv := k.ServeListener(raw, cl)
	c := k.Dial(srv)
	login, _ := wire.Encode(wire.Frame{Type: wire.Login, Sender: "alice", Payload: []byte("pass123")})
	c.Write(login, "a LOGIN frame (the discovery server only registers)")
	c.CloseWrite()
	c.ExpectClosed()
	select {
	case <-cl.closed:
	case <-time.After(testkit.IOTimeout):
		k.Fatalf("sent a LOGIN frame; the client saw the end of the stream, and the server had not closed its "+
			"connection %v later", testkit.IOTimeout)
	}
	judge.Settle(testkit.IOTimeout) // handle has returned: Serve waits in Accept
	cl.closing.Store(true)
	if err := closeWithin(raw); err != nil {
		k.Fatalf("Close after a refused LOGIN: %v", err)
	}
	if n := cl.late.Load(); n > 0 {
		k.Fatalf("sent: a LOGIN frame, which the server refused by closing the connection; then Close\n"+
			"expected: Close closes no connection but the one being served (there was none)\n"+
			"     got: Close closed the refused connection again (%d Close calls after the server's own)\n"+
			"likely cause: handle forgets the connection (s.conn = nil, under s.mu) only on the path that "+
			"answers: forget it on every return (defer it right after recording it)", n)
	}
}

// closeWithin calls Close and waits for it at most IOTimeout.
func closeWithin(srv interface{ Close() error }) error {
	done := make(chan error, 1)
	go func() { done <- srv.Close() }()
	select {
	case err := <-done:
		return err
	case <-time.After(testkit.IOTimeout):
		return fmt.Errorf("Close did not return within %v", testkit.IOTimeout)
	}
}

// closeCountingListener hands out connections that signal their first
// Close on closed and count, in late, the Close calls made after closing
// is set.
type closeCountingListener struct {
	net.Listener
	closed  chan struct{}
	closing atomic.Bool
	late    atomic.Int32
}

func (l *closeCountingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countedConn{Conn: c, l: l}, nil
}

type countedConn struct {
	net.Conn
	l *closeCountingListener
}

func (c *countedConn) Close() error {
	if c.l.closing.Load() {
		c.l.late.Add(1)
	}
	select {
	case c.l.closed <- struct{}{}:
	default:
	}
	return c.Conn.Close()
}
