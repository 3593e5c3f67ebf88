package testkit

import (
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"serverlab/tools/given/lab"
)

// backoffListener fails every Accept with EMFILE until it is closed, as a
// process out of file descriptors does.
type backoffListener struct {
	net.Listener
	failures   atomic.Int32
	closed     atomic.Bool
	afterClose atomic.Int32  // Accept calls once closed: a retry after a wait that Close did not end
	ninth      chan struct{} // a token when the 9th Accept fails: the wait before the 10th is a second
}

func (l *backoffListener) Accept() (net.Conn, error) {
	if l.closed.Load() {
		l.afterClose.Add(1)
		return nil, net.ErrClosed
	}
	if l.failures.Add(1) == 9 {
		l.ninth <- struct{}{}
	}
	return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
}

func (l *backoffListener) Close() error {
	l.closed.Store(true)
	return l.Listener.Close()
}

// CheckCloseDuringBackoff serves srv (a fresh server) on a listener whose
// Accept keeps failing with EMFILE, until Serve waits a second between
// attempts (lab.Accept doubles its wait from 5 ms), then closes srv: Close
// must interrupt that wait (the done channel lab.Accept watches, which
// Close closes) rather than sit it out. A timer that sleeps through Close
// makes every Close of a server out of descriptors a second late.
func (k *T) CheckCloseDuringBackoff(srv lab.Server) {
	k.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen: %v", err)
	}
	bl := &backoffListener{Listener: ln, ninth: make(chan struct{}, 1)}
	k.ServeListener(srv, bl)
	select { // lab.Accept waits 5 ms, doubling: after the 9th failure, a second
	case <-bl.ninth:
	case <-time.After(IOTimeout):
		k.Fatalf("Serve called Accept %d times in %v, each failing with EMFILE; want it to retry, waiting 5 ms "+
			"doubling up to a second (lab.Accept)", bl.failures.Load(), IOTimeout)
	}
	start := time.Now()
	closed := make(chan struct{})
	go func() { srv.Close(); close(closed) }()
	select {
	case <-closed:
		// Closed in the first moments of a second's wait, Serve must
		// return without trying Accept again: a retry on the closed
		// listener means it sat the wait out.
		if n := bl.afterClose.Load(); n > 0 {
			k.Errorf("Accept had failed %d times with EMFILE and Serve was waiting a second to retry; Close took %v "+
				"and Serve tried Accept again on the closed listener: Close must interrupt the wait (close s.done, "+
				"which lab.Accept watches) rather than sit it out", bl.failures.Load(), time.Since(start).Round(time.Millisecond))
		}
	case <-time.After(IOTimeout):
		k.Fatalf("Close did not return within %v while Serve was retrying an Accept that failed with EMFILE: "+
			"close s.done, which lab.Accept watches", IOTimeout)
	}
}
