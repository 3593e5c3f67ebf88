package discoverytest

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/wire"
)

// checkOneRequestDeadline: every Read of a request, whatever phase it is in
// (header or payload), happens under the request's one deadline, the first
// the server set. A server that renews the deadline once the header is in, or
// on each payload Read, lets a client that trickles its payload a byte at a
// time hold the iterative server far longer than Config.Timeout.
//
// The listener records the read deadline in force at each Read, so the
// verdict does not hang on how fast a loaded machine runs: the client sends
// the header's last byte half a Timeout after the server set its deadline,
// then the payload a byte every quarter Timeout; a deadline renewed after the
// header (or per Read) is then at least half a Timeout later than the first.
func checkOneRequestDeadline(k *testkit.T, impl Impl) {
	k.Helper()
	const timeout = time.Second
	raw, path := newServer(k, impl, Config{Timeout: timeout})
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen: %v", err)
	}
	ln := &readDeadlineListener{Listener: inner, set: make(chan struct{}), bad: make(chan struct{}), slack: timeout / 4}
	srv := k.ServeListener(raw, ln)

	c := k.Dial(srv)
	req := testkit.Encode(registration("trickler", strings.Repeat("p", 40)))
	c.Write(req[:wire.HeaderSize-1], "all of a registration's header but its last byte")
	select {
	case <-ln.set:
	case <-time.After(testkit.IOTimeout):
		k.Fatalf("a client connected and sent most of a header; the server set no read deadline within %v\n"+
			"hint: SetDeadline(time.Now().Add(Timeout)) as soon as the connection is accepted", testkit.IOTimeout)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Paced sends, not synchronisation: the pauses are what the check is
		// about, and each is bounded by stop.
		for i, b := range req[wire.HeaderSize-1:] {
			pause := timeout / 4
			if i == 0 {
				pause = timeout / 2
			}
			select {
			case <-stop:
				return
			case <-time.After(pause):
			}
			if c.NetConn().SetWriteDeadline(time.Now().Add(testkit.IOTimeout)) != nil {
				return
			}
			if _, err := c.NetConn().Write([]byte{b}); err != nil {
				return // the server closed the connection: what we want
			}
		}
	}()
	defer func() { close(stop); <-done }()

	// 40 payload bytes a quarter Timeout apart take 10 Timeouts to send;
	// the server must close the connection without answering long before.
	c.NetConn().SetReadDeadline(time.Now().Add(testkit.IOTimeout + timeout))
	go func() {
		select {
		case <-ln.bad: // the verdict is in: stop waiting for the answer
			c.NetConn().SetReadDeadline(time.Now())
		case <-stop:
		}
	}()
	var buf [256]byte
	n, rerr := c.NetConn().Read(buf[:])
	if v := ln.violation(); v != "" {
		k.Fatalf("exercise 1.5: sent a registration's header, its last byte %v after the server set its deadline, "+
			"then its %d-byte payload one byte every %v (Config.Timeout = %v)\n"+
			"  want: every Read of the request under the one deadline set for it\n"+
			"   got: %s\n"+
			"hint: set the deadline once, when the request starts; a deadline renewed after the header or on each "+
			"payload Read lets a client trickle its payload and hold the iterative server for as long as it likes",
			timeout/2, len(req)-wire.HeaderSize, timeout/4, timeout, v)
	}
	switch {
	case n > 0:
		k.Fatalf("exercise 1.5: sent a registration's header, then its payload one byte every %v (Config.Timeout = %v)\n"+
			"  want: the connection closed without an answer once Timeout is up\n   got: an answer (%d bytes)\n"+
			"hint: one deadline for the whole request, header and payload", timeout/4, timeout, n)
	case !testkit.IsClosed(rerr):
		k.Fatalf("exercise 1.5: sent a registration's header, then its payload one byte every %v (Config.Timeout = %v)\n"+
			"  want: the connection closed without an answer once Timeout is up\n   got: %s\n"+
			"hint: one deadline for the whole request, header and payload", timeout/4, timeout, testkit.Describe(rerr))
	}
	if strings.Contains(readFile(k, path), "trickler") {
		k.Errorf("exercise 1.5: a client that trickled its payload past Config.Timeout was registered; " +
			"the deadline must cover the whole request")
	}
}

// readDeadlineListener hands out connections that keep the read deadline in
// force and check it at each Read against the first one set: the request's.
// Only the first connection is watched; the check makes one.
type readDeadlineListener struct {
	net.Listener
	set   chan struct{} // closed when the first read deadline is set
	once  sync.Once
	bad   chan struct{} // closed at the first Read under a wrong deadline
	slack time.Duration // forgives a server that sets the same deadline twice in a row

	mu       sync.Mutex
	accepted bool
	first    time.Time // the first non-zero read deadline
	current  time.Time // the read deadline in force
	worst    string    // the first Read under a later deadline, described
}

func (l *readDeadlineListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.accepted {
		return c, nil
	}
	l.accepted = true
	return &readDeadlineConn{Conn: c, l: l}, nil
}

// violation describes the first Read made under a read deadline later than
// the request's first by more than slack, or under none; "" if none was.
func (l *readDeadlineListener) violation() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.worst
}

type readDeadlineConn struct {
	net.Conn
	l *readDeadlineListener
	n int // bytes read so far
}

func (c *readDeadlineConn) setRead(t time.Time) {
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	c.l.current = t
	if c.l.first.IsZero() && !t.IsZero() {
		c.l.first = t
		c.l.once.Do(func() { close(c.l.set) })
	}
}

func (c *readDeadlineConn) SetDeadline(t time.Time) error {
	c.setRead(t)
	return c.Conn.SetDeadline(t)
}

func (c *readDeadlineConn) SetReadDeadline(t time.Time) error {
	c.setRead(t)
	return c.Conn.SetReadDeadline(t)
}

func (c *readDeadlineConn) Read(p []byte) (int, error) {
	c.l.mu.Lock()
	if c.l.worst == "" {
		phase := "the header"
		if c.n >= wire.HeaderSize {
			phase = "the payload"
		}
		switch {
		case c.l.current.IsZero():
			c.l.worst = fmt.Sprintf("a Read of %s (after %d bytes) with no read deadline in force", phase, c.n)
			close(c.l.bad)
		case c.l.current.Sub(c.l.first) > c.l.slack:
			c.l.worst = fmt.Sprintf("a Read of %s (after %d bytes) under a deadline %v later than the request's first",
				phase, c.n, c.l.current.Sub(c.l.first).Round(time.Millisecond))
			close(c.l.bad)
		}
	}
	c.l.mu.Unlock()
	n, err := c.Conn.Read(p)
	c.n += n
	return n, err
}
