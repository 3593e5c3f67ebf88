package stocktest

import (
	"fmt"
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
// unanswered, until one of the four leaves, and is then served. The same with
// Config.Workers = 2 and a third client. Chapter 05's event loop serves
// everyone at once and does not run this check.
func WorkerPool(t *testing.T, impl Impl) {
	k := testkit.New(t, "4.5")
	checkPool(k, impl, 0, 4)
	checkPool(k, impl, 2, 2)
}

// checkPool runs the check on a server configured with Config.Workers =
// setting, which must serve exactly workers clients at once.
func checkPool(k *testkit.T, impl Impl, setting, workers int) {
	k.Helper()
	srv, _, _ := newServer(k, impl, Config{Workers: setting}, market)
	m := newModel(parseStocks(k, market))
	what := fmt.Sprintf("with Workers = %d", setting)
	if setting == 0 {
		what = "with the default of 4 workers"
	}

	busy := make([]*testkit.Conn, workers)
	for i := range busy {
		busy[i] = k.Dial(srv)
		exchange(k, busy[i], "show", m.apply(mustParse("show")))
	}
	extra := k.Dial(srv)
	extra.WriteLine("show")
	// Every worker answers once more: the extra request has had every chance
	// to be served, if one more connection were being served.
	for _, c := range busy {
		exchange(k, c, "buy 5 1", m.apply(mustParse("buy 5 1")))
	}
	extra.NetConn().SetReadDeadline(time.Now().Add(testkit.QuietWindow))
	var b [1]byte
	if n, _ := extra.NetConn().Read(b[:]); n > 0 {
		k.Fatalf("%s all serving a client, one more client got an answer: a worker pool serves each "+
			"connection from start to end, and the next one waits until a worker is free (is every "+
			"connection getting its own goroutine? is Config.Workers used?)%s", what, extra.Context())
	}
	extra.NetConn().SetReadDeadline(time.Time{})

	busy[0].WriteLine("exit")
	busy[0].ExpectClosed()
	// The extra client is served now, and sees the trades made while it waited.
	expectRecord(k, extra, m.apply(mustParse("show")))
	exchange(k, extra, "sell 5 4", m.apply(mustParse("sell 5 4")))
	for _, c := range busy[1:] {
		exchange(k, c, "show", m.apply(mustParse("show")))
		c.WriteLine("exit")
		c.ExpectClosed()
	}
	exchange(k, extra, "show", m.apply(mustParse("show")))
}
