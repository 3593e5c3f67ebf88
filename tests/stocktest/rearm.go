package stocktest

import (
	"net"
	"sync/atomic"
	"time"

	"serverlab/tests/testkit"
)

// rearmTimeout is the IdleTimeout and WriteTimeout of checkDeadlinesKept:
// long, so that rearm's slack (an eighth of it) spans the whole exchange on a
// quiet machine and most of it on a busy one.
const rearmTimeout = 8 * time.Second

// checkDeadlinesKept: a deadline is moved only when rearm says the old one is
// too near, the session remembering the one it set (ss.readBy, ss.writeBy).
// Moving one costs a system call and a timer operation in the runtime, and a
// busy client asks for thousands a second. A client that trades quickly is
// served with one move, then one more per eighth of the timeout that passes,
// for its reads and for its writes; a server that forgets the deadline it set
// moves it before every wait and every write.
func checkDeadlinesKept(k *testkit.T, impl Impl) {
	k.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen: %v", err)
	}
	counted := &deadlineCounter{Listener: ln}
	srv, _, _ := newServerOn(k, impl, Config{IdleTimeout: rearmTimeout, WriteTimeout: rearmTimeout}, market, counted)
	m := newModel(parseStocks(k, market))
	c := k.Dial(srv)
	const requests = 40
	start := time.Now()
	for range requests {
		exchange(k, c, "show", m.apply(mustParse("show")))
	}
	allowed := 2 + int64(time.Since(start)/(rearmTimeout/8))
	reads, writes := counted.reads.Load(), counted.writes.Load()
	if reads > allowed || writes > allowed {
		k.Fatalf("a client sent %d shows one after the other in %v, each answered; IdleTimeout and WriteTimeout %v.\n"+
			"  want: at most %d read deadlines and %d write deadlines set (one, then one per %v that passes)\n"+
			"   got: %d read deadlines and %d write deadlines set\n"+
			"A deadline is moved only when rearm says the old one is too near, the session remembering the one "+
			"it set (ss.readBy, ss.writeBy); moving it before every wait or write costs a system call and a "+
			"timer operation each time%s",
			requests, time.Since(start).Round(time.Millisecond), rearmTimeout, allowed, allowed, rearmTimeout/8,
			reads, writes, c.Context())
	}
}

// deadlineCounter is a listener whose connections count the deadlines the
// server sets on them (SetDeadline counts as both).
type deadlineCounter struct {
	net.Listener
	reads, writes atomic.Int64
}

func (l *deadlineCounter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, l: l}, nil
}

// countingConn counts its deadlines in its listener.
type countingConn struct {
	net.Conn
	l *deadlineCounter
}

func (c *countingConn) SetDeadline(t time.Time) error {
	c.l.reads.Add(1)
	c.l.writes.Add(1)
	return c.Conn.SetDeadline(t)
}

func (c *countingConn) SetReadDeadline(t time.Time) error {
	c.l.reads.Add(1)
	return c.Conn.SetReadDeadline(t)
}

func (c *countingConn) SetWriteDeadline(t time.Time) error {
	c.l.writes.Add(1)
	return c.Conn.SetWriteDeadline(t)
}
