package stocktest

import (
	"time"

	"serverlab/tests/testkit"
)

// longGrace is a CloseGrace far longer than any wait of the checks below, so
// that a server that waits for it instead of for the client is caught.
const longGrace = 30 * time.Second

// checkLinger checks when the lingering close of exercise 4.7 applies: only
// when the server is closing (a connection that ends on its own is closed at
// once), with the write side shut first (the client sees the end of stream at
// once), for as long as the client keeps its side open but never past
// CloseGrace, and Close waits for it.
func checkLinger(k *testkit.T, impl Impl) {
	k.Helper()
	checkLingerUntilClientCloses(k, impl)
	checkLingerBounded(k, impl)
	checkExitDoesNotLinger(k, impl)
}

// startClose calls raw.Close in the background; the channel receives its
// result.
func startClose(raw interface{ Close() error }) <-chan error {
	closed := make(chan error, 1)
	go func() { closed <- raw.Close() }()
	return closed
}

// checkLingerUntilClientCloses: Close with a client connected and idle. The
// client must see the end of stream at once (the write side is shut before
// the drain), Close must still be waiting while the client keeps its side
// open, and must return as soon as the client closes, long before CloseGrace.
func checkLingerUntilClientCloses(k *testkit.T, impl Impl) {
	k.Helper()
	srv, raw, _ := newServer(k, impl, Config{SyncInterval: never, CloseGrace: longGrace}, market)
	m := newModel(parseStocks(k, market))
	c := k.Dial(srv)
	exchange(k, c, "buy 4 1", m.apply(mustParse("buy 4 1")))

	closed := startClose(raw)
	start := time.Now()
	c.ExpectClosed() // within testkit.IOTimeout
	if waited := time.Since(start); waited > longGrace/2 {
		k.Fatalf("Close (CloseGrace %v) with a client connected: the client saw the end of stream only after %v;"+
			" want it at once: shut the write side first (CloseWrite), then drain what the client sends",
			longGrace, waited.Round(time.Millisecond))
	}
	c.Write([]byte("show\n"), `"show\n" after the end of stream (the lingering server reads and discards it)`)
	select {
	case err := <-closed:
		k.Fatalf("Close (CloseGrace %v) returned (%v) while a client it had half-closed still had its side open: "+
			"the lingering close drains what the client sends until it closes too, or CloseGrace passes, and Close "+
			"waits for it", longGrace, err)
	default:
	}
	c.Close()
	select {
	case err := <-closed:
		if err != nil {
			k.Fatalf("Close returned %v", err)
		}
	case <-time.After(testkit.IOTimeout):
		k.Fatalf("the client closed its side %v after Close (CloseGrace %v) began, and Close had not returned %v "+
			"later: the lingering close ends when the client closes (the drain reads end of stream), not when "+
			"CloseGrace passes", time.Since(start).Round(time.Millisecond), longGrace, testkit.IOTimeout)
	}
}

// checkLingerBounded: a client that neither closes nor stops sending cannot
// hold Close past CloseGrace.
func checkLingerBounded(k *testkit.T, impl Impl) {
	k.Helper()
	const grace = 300 * time.Millisecond
	srv, raw, _ := newServer(k, impl, Config{SyncInterval: never, CloseGrace: grace}, market)
	m := newModel(parseStocks(k, market))
	c := k.Dial(srv)
	defer c.Close()
	exchange(k, c, "buy 4 1", m.apply(mustParse("buy 4 1")))

	closed := startClose(raw)
	c.ExpectClosed()
	c.Write([]byte("show\n"), `"show\n" after the end of stream, the client keeping its side open`)
	select {
	case err := <-closed:
		if err != nil {
			k.Fatalf("Close returned %v", err)
		}
	case <-time.After(grace + testkit.IOTimeout):
		k.Fatalf("Close (CloseGrace %v) with a client that keeps its side open: Close had not returned %v later; "+
			"the lingering close must stop draining once CloseGrace has passed (a read deadline), or any client "+
			"can hold the server's shutdown for ever", grace, grace+testkit.IOTimeout)
	}
}

// checkExitDoesNotLinger: lingering is Close's. A connection that ends on its
// own (the client said exit) is closed at once: with one worker, a client
// that said exit and keeps its side open must not keep the next client
// waiting for CloseGrace.
func checkExitDoesNotLinger(k *testkit.T, impl Impl) {
	k.Helper()
	srv, _, _ := newServer(k, impl, Config{Workers: 1, SyncInterval: never, CloseGrace: longGrace}, market)
	m := newModel(parseStocks(k, market))
	a := k.Dial(srv)
	defer a.Close()
	exchange(k, a, "buy 4 1", m.apply(mustParse("buy 4 1")))
	a.WriteLine("exit")
	a.ExpectClosed()

	b := k.Dial(srv)
	defer b.Close()
	b.WriteLine("show")
	want := m.apply(mustParse("show"))
	text, _, err := readRecordN(b)
	if err != nil || text != want {
		k.Fatalf("one worker (CloseGrace %v); a client said exit and keeps its side open; then another client sent "+
			"show\n  want: the listing within %v\n   got: %q, %s\n"+
			"A connection that ends on its own is closed at once: lingering is for Close only, else each exit holds "+
			"its worker for CloseGrace", longGrace, testkit.IOTimeout, text, testkit.Describe(err))
	}
}
