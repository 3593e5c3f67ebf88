package stocktest

import (
	"sync/atomic"

	"serverlab/tests/testkit"
)

// checkCleanTreeNotWritten: a write-back that succeeded leaves the tree
// clean, and a clean tree is not written again. A client trades and leaves
// (one write-back); another only looks (show) and leaves; then the server is
// closed: neither the second client's leaving nor Close has anything to
// write, and OnSync, called after each write-back, must have been called
// once. A server that marks the tree dirty after every write-back, not only
// after a failed one, rewrites the same file each time, and logs every
// success as a failure.
func checkCleanTreeNotWritten(k *testkit.T, impl Impl) {
	k.Helper()
	s := make(syncs, 16)
	var calls atomic.Int64
	srv, raw, path := newServer(k, impl, Config{SyncInterval: never, OnSync: func(err error) {
		calls.Add(1)
		s.hook(err)
	}}, market)
	m := newModel(parseStocks(k, market))
	a := k.Dial(srv)
	exchange(k, a, "buy 5 3", m.apply(mustParse("buy 5 3")))
	a.WriteLine("exit")
	a.ExpectClosed()
	after := "after a client bought (buy 5 3) and left"
	if err := s.next(k, after); err != nil {
		k.Fatalf("%s, the write-back failed: %v", after, err)
	}
	if got := readText(k, path); got != m.file() {
		k.Fatalf("%s, stock.txt\n  want: %q\n   got: %q", after, m.file(), got)
	}
	b := k.Dial(srv)
	exchange(k, b, "show", m.apply(mustParse("show")))
	b.WriteLine("exit")
	b.ExpectClosed()
	if err := raw.Close(); err != nil {
		k.Fatalf("Close returned %v", err)
	}
	if n := calls.Load(); n != 1 {
		k.Fatalf("a client bought (buy 5 3) and left: the stocks were written back; then another client only "+
			"sent show and left, and the server was closed\n  want: OnSync called once (nothing changed after "+
			"the first write-back)\n   got: OnSync called %d times\nhint: a write-back that succeeded leaves the "+
			"tree clean (s.dirty false); only a failed one marks it dirty again, so that the next sync retries",
			n)
	}
	srv.Close()
}
