package jobtest

import (
	"bytes"
	"time"

	"serverlab/tests/testkit"
)

// checkCloseWithNonReader: Close is bounded by WriteTimeout whatever the
// clients do. A client that pipelines requests and never reads its answers
// (nor closes its socket) leaves its writer in a Write the kernel cannot
// finish; only the write deadline ends it. A writer without a deadline
// holds Close for ever, which the ordered-shutdown check, whose clients all
// read, cannot see. The client here keeps sending until the server stops
// reading, so the writer is stuck when Close begins.
func checkCloseWithNonReader(k *testkit.T, impl Impl) {
	k.Helper()
	const timeout = 300 * time.Millisecond
	const maxPending = 4096
	lines := newLineCounter(-1)
	raw, srv := newServerOn(k, impl, Config{Workers: 2, QueueCap: 4, MaxPending: maxPending,
		WriteTimeout: timeout, OnLineRead: lines.onLineRead}, k.ListenSmall())
	mute := k.DialSmall(srv.Addr)
	wrote := make(chan struct{})
	go func() { // sends until the server stops reading, or closes the connection
		defer close(wrote)
		mute.SetWriteDeadline(time.Now().Add(testkit.WatchdogTimeout))
		mute.Write(bytes.Repeat([]byte("PRIME 7\n"), 4<<20/len("PRIME 7\n")))
	}()
	k.Cleanup(func() { mute.Close(); <-wrote })
	read := stillAt(k, lines, 1, "a client sent PRIME 7 lines and read no answer")

	closed := make(chan error, 1)
	start := time.Now()
	go func() { closed <- raw.Close() }()
	k.OnAbort(func() { mute.Close(); <-closed })
	// WriteTimeout for the stuck write, and the busy machine's usual margin
	// for the rest of Close.
	limit := timeout + testkit.IOTimeout
	select {
	case <-closed:
	case <-time.After(limit):
		k.Fatalf("a client sent PRIME 7 lines and read no answer (the server read %d of them and stopped), and kept "+
			"its connection open; then Close was called with WriteTimeout %v\n  want: Close returns within %v\n"+
			"   got: it had not returned %v later\nhint: the writer must set a write deadline before every Write "+
			"(SetWriteDeadline(time.Now().Add(WriteTimeout))): a client that does not read may delay Close by "+
			"WriteTimeout, never hold it", read, timeout, limit, time.Since(start).Round(time.Millisecond))
	}
}
