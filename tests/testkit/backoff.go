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
	failures atomic.Int32
	closed   atomic.Bool
}

func (l *backoffListener) Accept() (net.Conn, error) {
	if l.closed.Load() {
		return nil, net.ErrClosed
	}
	l.failures.Add(1)
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
	bl := &backoffListener{Listener: ln}
	k.ServeListener(srv, bl)
	deadline := time.Now().Add(IOTimeout)
	for bl.failures.Load() < 9 && time.Now().Before(deadline) { // 5 ms doubling: the 9th wait is a second
		time.Sleep(10 * time.Millisecond) // polling a counter, with a deadline
	}
	start := time.Now()
	closed := make(chan struct{})
	go func() { srv.Close(); close(closed) }()
	select {
	case <-closed:
		if took := time.Since(start); took > 300*time.Millisecond {
			k.Errorf("Accept had failed %d times with EMFILE and Serve was waiting to retry; Close took %v: it must "+
				"interrupt the wait (close s.done, which lab.Accept watches) rather than sit it out", bl.failures.Load(), took)
		}
	case <-time.After(IOTimeout):
		k.Fatalf("Close did not return within %v while Serve was retrying an Accept that failed with EMFILE: "+
			"close s.done, which lab.Accept watches", IOTimeout)
	}
}
