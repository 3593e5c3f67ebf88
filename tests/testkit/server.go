package testkit

import (
	"errors"
	"net"
	"sync/atomic"
	"syscall"
	"time"

	"serverlab/tools/given/lab"
)

// Server is a server under test, running on a fresh 127.0.0.1 port.
type Server struct {
	k    *T
	srv  lab.Server
	ln   net.Listener
	Addr string

	errc   chan error // receives Serve's result once
	result error
	ended  bool
}

// Serve listens on 127.0.0.1:0, runs srv.Serve on it in a goroutine and
// returns at once. At cleanup the server is closed (see Close).
//
// If Serve returns by itself, the listener is closed, so that clients get
// "connection refused" at once instead of waiting for an answer that cannot
// come; failures then say what Serve returned.
func (k *T) Serve(srv lab.Server) *Server {
	k.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen on 127.0.0.1:0: %v", err)
	}
	return k.ServeListener(srv, ln)
}

// ServeListener is Serve with a listener the check made itself (for example
// one that injects faults).
func (k *T) ServeListener(srv lab.Server, ln net.Listener) *Server {
	s := &Server{k: k, srv: srv, ln: ln, Addr: ln.Addr().String(), errc: make(chan error, 1)}
	go func() {
		s.errc <- srv.Serve(ln) // buffered: recorded before clients can see the listener go
		ln.Close()              // harmless if Serve closed it already
	}()
	k.OnAbort(func() { srv.Close(); ln.Close() })
	k.Cleanup(func() { s.Close() })
	return s
}

// Stopped reports, without waiting, whether Serve has returned, and with what.
func (s *Server) Stopped() (err error, stopped bool) {
	if s.ended {
		return s.result, true
	}
	select {
	case s.result = <-s.errc:
		s.ended = true
		return s.result, true
	default:
		return nil, false
	}
}

// Wait waits up to IOTimeout for Serve to return, and reports with what.
func (s *Server) Wait() (err error, stopped bool) {
	if err, stopped := s.Stopped(); stopped {
		return err, true
	}
	select {
	case s.result = <-s.errc:
		s.ended = true
		return s.result, true
	case <-time.After(IOTimeout):
		return nil, false
	}
}

// whyDown adds to a failure message what Serve returned, if it has returned.
func (s *Server) whyDown() string {
	if s == nil {
		return ""
	}
	if err, stopped := s.Stopped(); stopped {
		return "\n(the server is not running: Serve returned " + errString(err) + ")"
	}
	return ""
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

// Close closes the server and waits, up to IOTimeout, for Serve to return
// lab.ErrServerClosed; anything else fails the check. It is safe to call more
// than once (and it is called again at cleanup).
func (s *Server) Close() {
	s.k.Helper()
	if s.srv == nil { // closed already, or given up on
		return
	}
	closed := make(chan error, 1)
	srv := s.srv // not s.srv in the goroutine: a Close that deadlocks has s.srv set to nil meanwhile
	go func() { closed <- srv.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			s.k.Errorf("Close returned an error: %v", err)
		}
	case <-time.After(IOTimeout):
		if running := stillRunning(); running != "" {
			s.k.Errorf("Close did not return within %v.\n%s", IOTimeout, running)
		} else {
			s.k.Errorf("Close did not return within %v: it must unblock Accept (close the listener) "+
				"and every connection, then wait for the goroutines it started", IOTimeout)
		}
		s.ln.Close()
		select {
		case <-closed:
		case <-time.After(IOTimeout):
			// A Close that deadlocks: give up on it rather than hang the check
			// until the watchdog; the leak check then names where it is stuck.
			s.srv = nil
			return
		}
	}
	err, stopped := s.Stopped()
	if !stopped {
		select {
		case s.result = <-s.errc:
			s.ended, err = true, s.result
		case <-time.After(IOTimeout):
			s.k.Errorf("Serve did not return within %v after Close", IOTimeout)
			s.ln.Close()
			select {
			case s.result = <-s.errc:
				s.ended, err = true, s.result
			case <-time.After(IOTimeout):
				s.srv = nil
				return
			}
		}
	}
	if !errors.Is(err, lab.ErrServerClosed) && !errors.Is(err, lab.ErrNotImplemented) {
		s.k.Errorf("after Close, Serve returned %s; want lab.ErrServerClosed", errString(err))
	}
	s.srv = nil
}

// CheckServeAfterClose closes srv (a fresh server, or one closed already:
// Close is idempotent, so either way it must return nil) and checks that Serve
// then returns lab.ErrServerClosed at once, as net/http.Server's does: a
// closed server must not start serving again, and closes the listener it
// was given.
func (k *T) CheckServeAfterClose(srv lab.Server) {
	k.Helper()
	if err := srv.Close(); err != nil {
		k.Fatalf("Close returned %v; want nil (Close is idempotent, and safe before Serve)", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen on 127.0.0.1:0: %v", err)
	}
	defer ln.Close()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		if !errors.Is(err, lab.ErrServerClosed) {
			k.Fatalf("Serve after Close returned %s; want lab.ErrServerClosed", errString(err))
		}
		// Serve owns ln from the call on: one that returns without closing
		// it leaves a socket (and a port bound) that no one will ever close.
		if tl, ok := ln.(*net.TCPListener); ok && !errors.Is(tl.SetDeadline(time.Time{}), net.ErrClosed) {
			k.Fatalf("Serve after Close returned lab.ErrServerClosed and left its listener (%s) open; "+
				"want it closed: Serve owns the listener it is given and closes it before it returns, "+
				"as net/http's does, even when it refuses to serve", ln.Addr())
		}
	case <-time.After(IOTimeout):
		ln.Close()
		<-served
		k.Fatalf("Serve after Close did not return within %v; want lab.ErrServerClosed at once", IOTimeout)
	}
}

// brokenListener is a listener whose Accept fails for good, as accept4 does
// on a socket that is no longer listening (EINVAL): an error that waiting
// does not mend, unlike EMFILE or ECONNABORTED.
type brokenListener struct {
	net.Listener
	accepts atomic.Int32
}

func (l *brokenListener) Accept() (net.Conn, error) {
	l.accepts.Add(1)
	return nil, acceptError(syscall.EINVAL)
}

// CheckAcceptErrorReturned serves srv (a fresh server) on a listener whose
// Accept fails for good, and checks that Serve returns that error rather than
// lab.ErrServerClosed: the server was not closed, and whoever runs it must be
// able to tell a listener that broke from a shutdown (to log it, to restart).
// A Close afterwards must still return nil.
func (k *T) CheckAcceptErrorReturned(srv lab.Server) {
	k.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen on 127.0.0.1:0: %v", err)
	}
	defer ln.Close()
	broken := &brokenListener{Listener: ln}
	want := acceptError(syscall.EINVAL)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(broken) }()
	select {
	case err := <-served:
		switch {
		case broken.accepts.Load() == 0:
			k.Fatalf("Serve returned %s without calling Accept on the listener it was given", errString(err))
		case err == nil || errors.Is(err, lab.ErrServerClosed):
			k.Fatalf("the listener's Accept failed for good, and nobody had called Close\n  sent: Accept's error %q "+
				"(not EMFILE, ENFILE or ECONNABORTED: waiting does not mend it)\n  want: Serve returns that error, "+
				"as it is\n   got: %s\nhint: Serve returns lab.ErrServerClosed only if the server is closed "+
				"(look under s.mu once Accept fails); any other accept error is returned as it is",
				want, errString(err))
		}
	case <-time.After(IOTimeout):
		srv.Close()
		select {
		case <-served:
		case <-time.After(IOTimeout):
		}
		k.Fatalf("the listener's Accept failed for good (%q); Serve had not returned %v later (it had called "+
			"Accept %d times): an accept error that is not one that passes (lab.Temporary) ends Serve",
			want, IOTimeout, broken.accepts.Load())
	}
	if err := closeWithin(srv); err != nil {
		k.Fatalf("Serve returned an accept error of its listener; Close afterwards returned %v; want nil", err)
	}
}
