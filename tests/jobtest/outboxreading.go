package jobtest

import (
	"bytes"
	"io"
	"time"

	"serverlab/tests/testkit"
)

// answerBytes is how many bytes the answers "OK <id> prime\n" to jobs 1..n
// take, the ids a server gives one client's n lines.
func answerBytes(n int64) int64 {
	total := int64(0)
	for digits, lo := int64(1), int64(1); lo <= n; digits, lo = digits+1, lo*10 {
		hi := min(n, lo*10-1)
		total += (hi - lo + 1) * (int64(len("OK  prime\n")) + digits)
	}
	return total
}

// checkOutboxBoundWhileRead: MaxPending bounds every answer the server holds
// for a client, the batch its writer is writing included. Every line the
// server has read is answered in one of four places: read by the client, in
// the two sockets' buffers, in the server (waiting or being written), or a
// job still to run. The client sends PRIME 7 lines without end and reads
// nothing until the server stops reading; then it reads a chunk at a time,
// each time until the server stops again, until the server has read more:
// a write has ended, and the writer has taken the outbox (full) as its next
// batch. A reader that counts only the waiting answers finds the outbox
// empty and reads MaxPending more: the server then holds twice the bound,
// more than the client read, the sockets hold and MaxPending can explain.
func checkOutboxBoundWhileRead(k *testkit.T, impl Impl) {
	k.Helper()
	// Large against the sockets' absorption and the chunk, so that a
	// doubled bound cannot hide in them; small enough that a subject whose
	// every OnLineRead is a call from another process reads it in seconds.
	const maxPending = 256 << 10
	const chunk = 32 << 10
	const inFlight = 4 + 2 + 1 // queued, running, waiting in Put
	lines := newLineCounter(-1)
	_, srv := newServerOn(k, impl, Config{Workers: 2, QueueCap: 4, MaxPending: maxPending,
		// A client slowed by a busy machine must not be dropped by the
		// server's write deadline (beside 16 busy loops this check's waits
		// passed a minute): here it is only a backstop.
		OnLineRead: lines.onLineRead, WriteTimeout: 10 * time.Minute}, k.ListenSmall())
	mute := k.DialSmall(srv.Addr)
	wrote := make(chan struct{})
	go func() { // sends until the test ends (and closes the connection)
		defer close(wrote)
		mute.SetWriteDeadline(time.Now().Add(testkit.WatchdogTimeout))
		mute.Write(bytes.Repeat([]byte("PRIME 7\n"), 4<<20/len("PRIME 7\n")))
	}()
	k.Cleanup(func() { mute.Close(); <-wrote })
	before := stillAt(k, lines, maxPending/len("OK 9999999 prime\n"), "the client sent PRIME 7 lines and read nothing")
	// Whatever the batch being written, reading this much ends it.
	const enough = maxPending + testkit.SmallAbsorption + chunk
	buf := make([]byte, chunk)
	read, after := 0, before
	for after == before {
		if read >= enough {
			k.Fatalf("a client sent PRIME 7 lines without reading until the server stopped reading (%d lines, "+
				"MaxPending %d), then read %d bytes of answers: the server read no further line; room in the "+
				"outbox must come as answers leave it (signal the reader when a write ends)", before, maxPending, read)
		}
		mute.SetReadDeadline(time.Now().Add(testkit.IOTimeout))
		if _, err := io.ReadFull(mute, buf); err != nil {
			k.Fatalf("the client that sent PRIME 7 lines without reading, reading answers at last, after %d "+
				"bytes: %s", read, testkit.Describe(err))
		}
		read += chunk
		after = stillAt(k, lines, 0, "the client read a chunk of answers")
	}
	held := answerBytes(after) - int64(read)
	if bound := int64(maxPending + testkit.SmallAbsorption + inFlight*len("OK 9999999 prime\n")); held > bound {
		k.Fatalf("a client sent PRIME 7 lines without reading until the server stopped reading (%d lines, "+
			"MaxPending %d), then read %d bytes of answers, %d at a time, until it read again; once it had "+
			"stopped again it had read %d lines, whose answers take %d bytes: %d bytes not read by the client, "+
			"want at most %d (MaxPending, what the sockets hold, %d jobs in flight)\nhint: count the batch the "+
			"writer is writing against MaxPending too (pending + writing): a reader that counts only the waiting "+
			"answers reads MaxPending more each time the writer takes the outbox", before, maxPending, read, chunk,
			after, answerBytes(after), held, bound, inFlight)
	}
}
