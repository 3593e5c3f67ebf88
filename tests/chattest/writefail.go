package chattest

import (
	"errors"
	"net"
	"sync/atomic"

	"serverlab/tests/testkit"
)

// checkWriteFailCloses: when a write to a client fails, the writer ends and
// closes the connection, which ends its reader (TODO(ex 2.2), writeLoop).
// ann's connection is made to fail every write once she has logged in
// (fault injection: a peer gone in a way the socket reports only to
// writes); ben then broadcasts. ann's client must see the end of the
// stream: a writer that only returns leaves her reader waiting on a
// connection nobody writes to, and her name online for a client that hears
// nothing.
//
// Only a server whose clients each have goroutines of their own
// (GoroutinePerClient, chapter 02) writes through the net.Conn the listener
// hands out; an event loop (chapter 05) writes to the descriptor.
func checkWriteFailCloses(k *testkit.T, impl Impl) {
	k.Helper()
	if !impl.GoroutinePerClient {
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen on 127.0.0.1:0: %v", err)
	}
	fl := &writeFailListener{Listener: ln}
	e := startOn(k, impl, Config{}, fl, "ann", "ben")
	ann := e.loginAs("ann") // the listener's first connection
	ben := e.loginAs("ben")
	fl.failing.Store(true)
	send(k, ben, broadcastFrame("ben", everyone, []byte("are you there?")))
	got, err := ann.TryReadFrame()
	if !testkit.IsClosed(err) {
		what := testkit.Describe(err)
		if err == nil {
			what = "a frame: " + got.String()
		}
		k.Fatalf("sent: ann logged in, then every write to her connection failed (%v), and ben broadcast\n"+
			"expected: the server closes ann's connection (her client sees the end of the stream)\n"+
			"     got: %s\n"+
			"likely cause: the writer returns when a write fails but leaves the connection open: close it "+
			"(c.conn.Close()), so that the reader's Read fails and the client goes offline", errWriteInjected, what)
	}
}

var errWriteInjected = errors.New("injected write failure (a peer the socket reports gone)")

// writeFailListener hands out connections; once failing is set, every
// Write on the first one fails with errWriteInjected, writing nothing.
type writeFailListener struct {
	net.Listener
	accepted atomic.Int32
	failing  atomic.Bool
}

func (l *writeFailListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if l.accepted.Add(1) == 1 {
		return &writeFailConn{Conn: c, l: l}, nil
	}
	return c, nil
}

type writeFailConn struct {
	net.Conn
	l *writeFailListener
}

func (c *writeFailConn) Write(p []byte) (int, error) {
	if c.l.failing.Load() {
		return 0, errWriteInjected
	}
	return c.Conn.Write(p)
}
