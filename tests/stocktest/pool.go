package stocktest

import (
	"testing"
	"time"

	"serverlab/tests/testkit"
)

// quietWindow is how long WorkerPool listens for a reply that must not come.
// A server that serves every connection at once answers in microseconds, so
// the window catches it; a correct server never answers, so the check cannot
// fail spuriously however slow the machine.
const quietWindow = 200 * time.Millisecond

// WorkerPool checks exercise 4.5: a pre-threaded server. With the default of
// 4 workers, 4 clients are served at once; a fifth is accepted but waits,
// unanswered, until one of the four leaves, and is then served. Chapter 05's
// event loop serves everyone at once and does not run this check.
func WorkerPool(t *testing.T, impl Impl) {
	k := impl.start(t, "WorkerPool", "4.5")
	srv, _, _ := newServer(k, impl, Config{}, market)
	m := newModel(parseStocks(k, market))
	const workers = 4

	busy := make([]*testkit.Conn, workers)
	for i := range busy {
		busy[i] = k.Dial(srv)
		exchange(k, busy[i], "show", m.apply(mustParse("show")))
	}
	fifth := k.Dial(srv)
	fifth.WriteLine("show")
	// Every worker answers once more: the fifth request has had every chance
	// to be served, if a fifth connection were being served.
	for _, c := range busy {
		exchange(k, c, "buy 5 1", m.apply(mustParse("buy 5 1")))
	}
	fifth.NetConn().SetReadDeadline(time.Now().Add(quietWindow))
	var b [1]byte
	if n, _ := fifth.NetConn().Read(b[:]); n > 0 {
		k.Fatalf("with %d workers (the default) all serving a client, a fifth client got an answer: a worker "+
			"pool serves each connection from start to end, and a fifth waits until one leaves "+
			"(is every connection getting its own goroutine?)%s", workers, fifth.Context())
	}
	fifth.NetConn().SetReadDeadline(time.Time{})

	busy[0].WriteLine("exit")
	busy[0].ExpectClosed()
	// The fifth is served now, and sees the trades made while it waited.
	expectRecord(k, fifth, m.apply(mustParse("show")))
	exchange(k, fifth, "sell 5 4", m.apply(mustParse("sell 5 4")))
	for _, c := range busy[1:] {
		exchange(k, c, "show", m.apply(mustParse("show")))
		c.WriteLine("exit")
		c.ExpectClosed()
	}
	exchange(k, fifth, "show", m.apply(mustParse("show")))
}
