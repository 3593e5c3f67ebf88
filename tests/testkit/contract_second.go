package testkit

import (
	"errors"
	"net"
	"time"

	"serverlab/tools/given/lab"
)

// checkSecondServe: while one Serve runs, a second Serve on another listener
// returns lab.ErrServerClosed at once and closes that listener; the first
// goes on serving, and Close then returns and ends it. A server keeps one
// listener for Close to close: a second Serve that records its own in its
// place (or serves both) leaves the first Accept blocked on a listener
// nobody closes, and Close waits for that Serve for ever. A server that
// serves several listeners (Contract.SeveralListeners) serves the second
// too, and Close ends both.
func checkSecondServe(k *T, c Contract) {
	srv := c.New(Logger())
	s := k.Serve(srv)
	c.Probe(k, s.Addr)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen on 127.0.0.1:0: %v", err)
	}
	defer ln.Close()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if c.SeveralListeners {
		checkBothServed(k, c, s, ln.Addr().String(), served)
		return
	}
	select {
	case err := <-served:
		if !errors.Is(err, lab.ErrServerClosed) {
			k.Fatalf("sent: a second Serve (another listener) while the first serves\n"+
				"expected: lab.ErrServerClosed at once\n     got: %s\n"+
				"likely cause: start() (or your Serve) refuses a server that is closed but not one that "+
				"serves already", errString(err))
		}
		if tl, ok := ln.(*net.TCPListener); ok && !errors.Is(tl.SetDeadline(time.Time{}), net.ErrClosed) {
			k.Fatalf("sent: a second Serve (another listener) while the first serves\n"+
				"expected: its listener (%s) closed: Serve owns the listener it is given, even one it refuses\n"+
				"     got: lab.ErrServerClosed, and the listener left open", ln.Addr())
		}
	case <-time.After(IOTimeout):
		ln.Close()
		k.Fatalf("sent: a second Serve (another listener) while the first serves\n"+
			"expected: lab.ErrServerClosed at once\n     got: Serve still running after %v: it serves the "+
			"second listener too, and Close, which closes the one listener it recorded, would wait for "+
			"the other Serve for ever\nlikely cause: start() (or your Serve) refuses a server that is "+
			"closed but not one that serves already", IOTimeout)
	}
	c.Probe(k, s.Addr) // the first Serve was not disturbed
	s.Close()          // returns, and the first Serve returns lab.ErrServerClosed
}

// checkBothServed: a server that serves every listener it is given answers
// on the second, and Close ends both Serve calls with lab.ErrServerClosed.
func checkBothServed(k *T, c Contract, s *Server, second string, served <-chan error) {
	c.Probe(k, second)
	c.Probe(k, s.Addr)
	s.Close() // returns, and the first Serve returns lab.ErrServerClosed
	select {
	case err := <-served:
		if !errors.Is(err, lab.ErrServerClosed) {
			k.Fatalf("sent: Close, with two Serve calls serving\nexpected: the second Serve returns "+
				"lab.ErrServerClosed\n     got: %s", errString(err))
		}
	case <-time.After(IOTimeout):
		k.Fatalf("sent: Close, with two Serve calls serving\nexpected: both return lab.ErrServerClosed\n"+
			"     got: the second Serve still running %v after Close returned: Close must close every "+
			"listener it was given", IOTimeout)
	}
}
