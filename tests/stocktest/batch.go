package stocktest

import (
	"errors"
	"os"
	"strings"
	"time"

	"serverlab/tests/judge"
	"serverlab/tests/testkit"
)

// checkBatching checks the two halves of 4.2's batching rule on the threaded
// server, without timing: a trade of stock 5 is stopped inside its stock's
// lock (the suite's Config.NewStockLock), so the worker is known to be in the
// middle of a pipelined batch while the client looks at what has arrived.
//
//   - Fewer than maxBatch replies gathered: nothing is written yet. A server
//     that writes each reply at once makes one write per request (the cost
//     the batch exists to save) and, to a client that pipelines and reads
//     late, blocks on a full socket long before it reaches the later lines.
//   - maxBatch replies gathered: they are written now, before the next
//     request runs. A server that holds them until the buffer runs dry keeps
//     a client that pipelines a long run of requests waiting for every reply,
//     and its memory grows with the run.
//
// Both were unchecked: a serveBatch that never flushed at maxBatch, or
// flushed after every reply, passed 4.2, and the second then failed 4.7 with
// a message about a lock.
// peekFor bounds checkBatching's look for bytes that have arrived already.
const peekFor = 20 * time.Millisecond

func checkBatching(k *testkit.T, impl Impl) {
	k.Helper()
	if !impl.Threaded {
		return // chapter 05's event loop writes as the socket allows: it has no batch
	}
	m := newModel(parseStocks(k, market))

	// A short batch: maxBatch-1 sells and the held buy.
	p, cfg := newLockProbe(k, Config{SyncInterval: never})
	srv, _, _ := newServer(k, impl, cfg, market)
	p.freeAtCleanup(k)
	c := k.Dial(srv)
	held := p.holdFirst(k)
	short := maxBatchRecords - 1
	c.Write([]byte(strings.Repeat("sell 3 1\n", short)+"buy 5 1\n"),
		`"sell 3 1\n" × 7 and "buy 5 1\n" in one write`)
	held.awaitInside(k, "a client sent sell 3 1 seven times and buy 5 1 in one write (checking 4.2's batch)")
	judge.Settle(testkit.IOTimeout) // a write the worker made before the lock has reached the client
	// Bytes already on the socket are read at once; the bound only ends the
	// look when there are none (a deadline already past would not look:
	// Go's netpoller fails such a read before it tries it).
	c.NetConn().SetReadDeadline(time.Now().Add(peekFor))
	var one [1]byte
	if n, err := c.NetConn().Read(one[:]); n > 0 {
		held.free()
		k.Fatalf("a client sent, in one write, sell 3 1 seven times and buy 5 1, and the suite stopped the buy " +
			"inside stock 5's lock: replies had already reached the client before the batch was done\n" +
			"  want: nothing written while the last line of the batch runs (7 replies, under maxBatch = 8)\n" +
			"   got: reply bytes on the socket\n" +
			"hint: serveBatch gathers the replies of pipelined lines in ss.out and writes them together (flush) " +
			"once no whole line is left in ss.r, or when len(ss.out) reaches maxBatch; not after every reply")
	} else if !errors.Is(err, os.ErrDeadlineExceeded) {
		held.free()
		k.Fatalf("reading from a client whose buy is held inside stock 5's lock: %v (want nothing yet)%s", err, c.Context())
	}
	held.free()
	for range short {
		expectRecord(k, c, m.apply(mustParse("sell 3 1")))
	}
	expectRecord(k, c, m.apply(mustParse("buy 5 1")))

	// A full batch: maxBatch sells, then the held buy.
	p, cfg = newLockProbe(k, Config{SyncInterval: never})
	srv, _, _ = newServer(k, impl, cfg, market)
	p.freeAtCleanup(k)
	m = newModel(parseStocks(k, market))
	c = k.Dial(srv)
	held = p.holdFirst(k)
	c.Write([]byte(strings.Repeat("sell 3 1\n", maxBatchRecords)+"buy 5 1\n"),
		`"sell 3 1\n" × 8 and "buy 5 1\n" in one write`)
	held.awaitInside(k, "a client sent sell 3 1 eight times and buy 5 1 in one write (checking 4.2's batch)")
	for i := range maxBatchRecords {
		want := m.apply(mustParse("sell 3 1"))
		got, _, err := c.TryReadRecord()
		if err != nil {
			held.free()
			k.Fatalf("a client sent, in one write, sell 3 1 eight times and buy 5 1, and the suite stopped the buy "+
				"inside stock 5's lock\n  want: the 8 sells' replies (a full batch: maxBatch = 8 records) "+
				"written before the buy runs\n   got: %d of them, then %v\n"+
				"hint: serveBatch must write the batch (flush) as soon as len(ss.out) reaches maxBatch, not only "+
				"once no whole line is left: a client that pipelines a long run would otherwise wait for all of "+
				"it, and ss.out grow with it", i, err)
		}
		if got != want {
			held.free()
			k.Fatalf("reply %d of 8 pipelined sells\n  want: %q\n   got: %q%s", i+1, want, got, c.Context())
		}
	}
	held.free()
	expectRecord(k, c, m.apply(mustParse("buy 5 1")))
}
