package discoverytest

import (
	"errors"
	"net"
	"sync"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/lab"
)

// checkCloseRules: what TODO(ex 1.4) asks of Serve and Close, checked in
// 1.4 itself; only closing the connection being served is 1.6's. Before,
// these ran in 1.6 alone (the contract, checkCloseWaitsForServe,
// checkCloseDuringBackoff), so a 1.4 mistake (ln.Accept for lab.Accept, a
// second Close that does not wait) cost 1.6 and sent the student to the
// wrong code. None of them holds a client connected while Close runs.
func checkCloseRules(k *testkit.T, impl Impl) {
	k.Helper()
	k.CheckServeRules(contract(k, impl))
	checkCloseDuringBackoff(k, impl)
	checkCloseWaitsForServe(k, impl)
	checkSecondCloseWaits(k, impl)
}

// gatedListener holds Serve's Accept, once the listener is closed, until the
// check opens the gate: Serve then certainly still runs while a Close that
// does not wait for it returns.
type gatedListener struct {
	net.Listener
	closed    chan struct{} // closed by Close
	gate      chan struct{} // closed by open
	closeOnce sync.Once
	gateOnce  sync.Once
}

func (l *gatedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		select {
		case <-l.closed:
			<-l.gate
		default:
		}
	}
	return c, err
}

func (l *gatedListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

func (l *gatedListener) open() { l.gateOnce.Do(func() { close(l.gate) }) }

// checkSecondCloseWaits: a Close called once the first has closed the
// listener, while Serve still runs, waits for Serve as the first does. The
// listener keeps Serve's Accept from returning until the check lets it, so
// the window that racing calls meet only now and then (checkCloseWaitsForServe)
// stays open: a second Close that returns at once because the first is
// under way is caught every time.
func checkSecondCloseWaits(k *testkit.T, impl Impl) {
	k.Helper()
	raw, _ := newServer(k, impl, Config{Timeout: time.Minute})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen: %v", err)
	}
	gl := &gatedListener{Listener: ln, closed: make(chan struct{}), gate: make(chan struct{})}
	srv := k.ServeListener(raw, gl)
	k.OnAbort(gl.open)
	k.Cleanup(gl.open) // after ServeListener's: runs before its Close
	register(k, srv, "alice", "pw", "OK")

	first := make(chan error, 1)
	go func() { first <- raw.Close() }()
	select {
	case <-gl.closed:
	case err := <-first:
		k.Fatalf("Close returned %v without closing the listener Serve was accepting on; want the listener "+
			"closed (that is what makes Accept return)", err)
	case <-time.After(testkit.IOTimeout):
		k.Fatalf("Close did not close the listener Serve was accepting on within %v", testkit.IOTimeout)
	}
	second := make(chan error, 1)
	go func() { second <- raw.Close() }()
	const what = "a Close closed the listener, and Serve's Accept was held from returning (it cannot end yet); " +
		"then a second Close was called"
	select {
	case err := <-second:
		k.Fatalf("%s\n  want: it returns only once Serve has returned\n   got: it returned %v while Serve still "+
			"ran\nLikely cause: only the first Close waits (s.serve.Wait()); every call must wait, the second too "+
			"(a signal handler and a deferred Close run at once)", what, errString(err))
	case err := <-first:
		k.Fatalf("%s\n  want: the first returns only once Serve has returned\n   got: it returned %v while "+
			"Serve still ran\nLikely cause: Close does not wait for Serve (s.serve.Wait())", what, errString(err))
	case <-time.After(testkit.IOTimeout / 20):
	}
	gl.open()
	for i, ch := range []chan error{first, second} {
		select {
		case err := <-ch:
			if i == 1 && err != nil {
				k.Errorf("%s; once Serve returned, the second Close returned %v, want nil", what, err)
			}
		case <-time.After(testkit.IOTimeout):
			k.Fatalf("%s; Serve's Accept was then let return: Close call %d of 2 did not return within %v",
				what, i+1, testkit.IOTimeout)
		}
	}
	if err, stopped := srv.Wait(); !stopped {
		k.Fatalf("Serve did not return within %v after both Close calls returned", testkit.IOTimeout)
	} else if !errors.Is(err, lab.ErrServerClosed) {
		k.Fatalf("after Close, Serve returned %v; want lab.ErrServerClosed", err)
	}
}

// errString shows an error, or "nil".
func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}
