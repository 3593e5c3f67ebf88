package jobtest

import (
	"net"
	"sync"
	"time"

	"serverlab/tests/judge"
	"serverlab/tests/testkit"
)

// checkCloseWaitsForWorkers: Close returns only once the workers are done,
// also when no connection is left to wait for. A job's connection is
// normally kept open by the job's reference, so waiting for the readers
// and writers waits for the jobs too, and a Close that forgets the pool
// passes every other check; but a connection whose write failed ends at
// once, its jobs still running. Here job 1 is held in OnJobStart, job 2's
// answer meets a connection the client has reset, so the connection ends,
// and Close is called: it must not return while job 1 runs.
func checkCloseWaitsForWorkers(k *testkit.T, impl Impl) {
	k.Helper()
	hold := map[uint64]chan struct{}{1: make(chan struct{}), 2: make(chan struct{})}
	var once [3]sync.Once
	release := func(id uint64) { once[id].Do(func() { close(hold[id]) }) }
	k.OnAbort(func() { release(1); release(2) })
	defer release(1)
	defer release(2)
	started := make(chan uint64, 16)
	onJobStart := func(id uint64) {
		select {
		case started <- id:
		default:
		}
		if ch := hold[id]; ch != nil {
			<-ch
		}
	}
	raw, srv := newServer(k, impl, Config{Workers: 2, QueueCap: 4, OnJobStart: onJobStart})
	c := k.Dial(srv)
	c.Write([]byte("PRIME 7\nPRIME 11\n"), `"PRIME 7\nPRIME 11\n"`)
	for seen := 0; seen < 2; seen++ {
		select {
		case <-started:
		case <-time.After(testkit.IOTimeout):
			k.Fatalf("two workers, a client sent 2 PRIME lines: %d of the 2 jobs had started %v later",
				seen, testkit.IOTimeout)
		}
	}
	if tc, ok := c.NetConn().(*net.TCPConn); ok {
		tc.SetLinger(0) // close with a reset
	}
	c.Close()
	judge.Settle(testkit.IOTimeout) // the reader has met the reset
	release(2)                      // job 2's answer fails to go: the connection ends
	judge.Settle(testkit.IOTimeout)
	closed := make(chan error, 1)
	go func() { closed <- raw.Close() }()
	judge.Settle(testkit.IOTimeout)
	select {
	case err := <-closed:
		k.Fatalf("two workers ran job 1 (held in OnJobStart) and job 2, whose client reset the connection before its "+
			"answer; then Close returned (%v) while job 1 still ran\nhint: Close waits for the workers (the pool's "+
			"Wait) after the readers and writers: a connection whose write failed ends at once, and its jobs do "+
			"not keep Close waiting through it", err)
	default:
	}
	release(1)
	select {
	case <-closed:
	case <-time.After(testkit.IOTimeout):
		k.Fatalf("job 1 was let go, and Close had not returned %v later", testkit.IOTimeout)
	}
}
