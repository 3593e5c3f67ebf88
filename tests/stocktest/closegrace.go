package stocktest

import (
	"context"
	"net"
	"strings"
	"syscall"
	"time"

	"serverlab/tests/judge"
	"serverlab/tests/testkit"
)

// closeGraceShort is the CloseGrace of checkCloseGraceForLateWrite: short
// beside its WriteTimeout, so that which of the two bounded the write shows
// in how long Close takes.
const closeGraceShort = 200 * time.Millisecond

// checkCloseGraceForLateWrite: a write that starts after Close has been
// called is bounded by CloseGrace, not WriteTimeout. Close's own deadline
// covers a write already blocked; a worker that was running a request when
// Close came writes its batch afterwards, and moving the write deadline
// there (rearm, WriteTimeout) replaces Close's. The client pipelines seven
// sells and a trade the suite stops inside its stock's lock, and reads
// nothing: the worker holds 64 KiB of replies, more than small socket
// buffers take. Close is called, then the trade let go: the worker's write
// blocks, and Close must return about CloseGrace later, long before
// WriteTimeout.
func checkCloseGraceForLateWrite(k *testkit.T, impl Impl) {
	k.Helper()
	const sells = maxBatchRecords - 1 // with the held trade's reply: one batch, written once
	writeTimeout := 4 * testkit.IOTimeout
	ln, err := (&net.ListenConfig{Control: smallBuffer(syscall.SO_SNDBUF)}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen: %v", err)
	}
	p, cfg := newLockProbe(k, Config{Workers: 1, SyncInterval: never, CloseGrace: closeGraceShort,
		WriteTimeout: writeTimeout})
	srv, raw, _ := newServerOn(k, impl, cfg, market, ln)
	p.freeAtCleanup(k)
	idle := k.Dial(srv)
	exchange(k, idle, "show", newModel(parseStocks(k, market)).apply(mustParse("show"))) // it waits in the waiting room
	mute := k.DialWith(&net.Dialer{Control: smallBuffer(syscall.SO_RCVBUF)}, srv)
	held := p.holdFirst(k)
	sent := strings.Repeat("sell 3 1\n", sells) + "buy 5 1\n"
	mute.Write([]byte(sent), `"sell 3 1\n" × 7 and "buy 5 1\n" in one write, then nothing read`)
	held.awaitInside(k, "a client sent sell 3 1 seven times and buy 5 1 in one write and read nothing "+
		"(small socket buffers; if 4.2 fails too, fix it first: a worker that writes each reply at once, "+
		"not as one batch, is still blocked writing the sells' replies)")

	closed := make(chan error, 1)
	start := time.Now()
	go func() { closed <- raw.Close() }()
	// The idle client's connection ends once Close has begun setting its
	// deadlines (on every connection, in one pass); Settle then waits until
	// Close is waiting for the worker, and only then is the trade let go.
	idle.ExpectClosed()
	judge.Settle(testkit.IOTimeout)
	held.free()

	select {
	case err := <-closed:
		if err != nil {
			k.Fatalf("Close returned %v", err)
		}
	case <-time.After(2 * testkit.IOTimeout):
		k.Fatalf("CloseGrace %v, WriteTimeout %v, 1 worker. A client sent, in one write, sell 3 1 seven "+
			"times and buy 5 1, which the suite stopped inside stock 5's lock, and read nothing; Close was called, then the trade "+
			"let go: its batch of replies (64 KiB, more than the socket buffers take) was written after Close.\n"+
			"  want: Close returns about CloseGrace later\n   got: still waiting after %v\n"+
			"hint: a write that starts once the server is closing gets CloseGrace as its deadline (flush): "+
			"moving the deadline to WriteTimeout there replaces the one Close set", closeGraceShort, writeTimeout,
			time.Since(start).Round(time.Millisecond))
	}
	srv.Close()
}

// maxBatchRecords is how many reply records chapter 04's worker gathers
// before it writes them (its maxBatch: 8 records).
const maxBatchRecords = 8
