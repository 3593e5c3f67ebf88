package jobtest

import (
	"net"
	"sync"
	"time"

	"serverlab/tests/testkit"
)

// gatedListener holds the first connection its Accept gets until the check
// opens the gate, and says when the server closes it: the check can then
// hand the server a connection after Close has begun, every time, instead
// of hoping the scheduler does.
type gatedListener struct {
	net.Listener
	got, closed, gate  chan struct{}
	gotOnce, closeOnce sync.Once
}

func newGatedListener(ln net.Listener) *gatedListener {
	return &gatedListener{Listener: ln, got: make(chan struct{}), closed: make(chan struct{}), gate: make(chan struct{})}
}

func (l *gatedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.gotOnce.Do(func() { close(l.got) })
	select {
	case <-l.gate:
	case <-time.After(4 * testkit.IOTimeout): // never hold a broken check's server for ever
	}
	return c, nil
}

func (l *gatedListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// checkAcceptedWhileClosing: a connection that Accept returns after Close
// has begun is closed at once, not served. Close closes the connections it
// knows of; one the accept loop adds after that has a reader waiting for a
// client that may never speak, and Close waits for it for ever.
func checkAcceptedWhileClosing(k *testkit.T, impl Impl) {
	k.Helper()
	requireQueueAndPool(k, impl)
	raw, err := impl.NewServer(Config{Workers: 1, QueueCap: 4})
	if err != nil {
		k.Fatalf("NewServer: %v", err)
	}
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen on 127.0.0.1:0: %v", err)
	}
	gl := newGatedListener(inner)
	defer func() {
		select {
		case <-gl.gate:
		default:
			close(gl.gate)
		}
	}()
	srv := k.ServeListener(raw, gl)
	c := k.Dial(srv) // connects, and never sends a line
	select {
	case <-gl.got:
	case <-time.After(testkit.IOTimeout):
		k.Fatalf("a client connected; the server's Accept did not return it within %v", testkit.IOTimeout)
	}
	closed := make(chan error, 1)
	go func() { closed <- raw.Close() }()
	select {
	case <-gl.closed:
	case <-time.After(testkit.IOTimeout):
		k.Fatalf("Close did not close the listener within %v", testkit.IOTimeout)
	}
	close(gl.gate) // Accept returns the silent client's connection now, while the server closes
	select {
	case <-closed:
	case <-time.After(testkit.IOTimeout):
		c.Close() // lets a server that serves it go
		k.Fatalf("Close began; then Accept returned a client's connection (it stays connected and silent): "+
			"want Close to return at once, got no return within %v. Likely cause: the accept loop tracks and "+
			"serves a connection without checking that the server is closing; under s.mu, close it instead "+
			"when s.closing is set", testkit.IOTimeout)
	}
	c.ExpectClosed()
}
