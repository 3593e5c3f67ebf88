package stocktest

import (
	"fmt"
	"net"
	"strings"
	"time"

	"serverlab/tests/judge"
	"serverlab/tests/testkit"
	"serverlab/tools/given/stockproto"
)

// maxLine is the protocol's longest request line, '\n' included (the
// original's MAXLINE; docs/protocols.md §3).
const maxLine = stockproto.RecordSize

// checkLineLimit: a line holds at most 8192 bytes, its '\n' included. Lines
// of 8191 and 8192 bytes are requests (answered: an unknown command, with a
// "\r\n" end too); one of 8193 bytes is not, and the server closes that
// connection, and only that one. Each length is sent on a connection of its
// own, so a server that miscounts by one byte either way is caught.
func checkLineLimit(k *testkit.T, srv *testkit.Server, m *model) {
	k.Helper()
	for _, tc := range []struct {
		body, end string
	}{
		{strings.Repeat("x", maxLine-2), "\n"},   // 8191 bytes
		{strings.Repeat("x", maxLine-1), "\n"},   // 8192 bytes: the limit
		{strings.Repeat("x", maxLine-2), "\r\n"}, // 8192 bytes, the '\r' counts
	} {
		c := k.Dial(srv)
		what := fmt.Sprintf("a %d-byte line (%d × 'x' then %q)", len(tc.body)+len(tc.end), len(tc.body), tc.end)
		c.Write([]byte(tc.body+tc.end), what)
		got, err := readRecord(c)
		want := reply(m, tc.body)
		if err != nil {
			k.Fatalf("sent %s: want the reply %q (a line holds up to 8192 bytes, its \"\\n\" included, so this "+
				"one is a request), got %v%s", what, want, err, c.Context())
		}
		if got != want {
			k.Fatalf("sent %s\n  want: %q\n   got: %q%s", what, want, got, c.Context())
		}
		exchange(k, c, "show", m.apply(mustParse("show"))) // still served after it
		c.Close()
	}
	long := k.Dial(srv)
	body := strings.Repeat("x", maxLine)
	long.Write([]byte(body+"\n"), "an 8193-byte line (8192 × 'x' then \"\\n\")")
	text, n, err := readRecordN(long)
	if n > 0 || !testkit.IsClosed(err) {
		k.Fatalf("sent an 8193-byte line (8192 × 'x' then \"\\n\"): want the connection closed without a "+
			"reply (a line holds at most 8192 bytes, \"\\n\" included: count the newline), got %d bytes "+
			"(%q), %v%s", n, text, testkit.Describe(err), long.Context())
	}
	exchange(k, k.Dial(srv), "show", m.apply(mustParse("show")))
}

// checkTrickle: IdleTimeout bounds the wait for a whole request, not for
// each byte of it. A client that sends one byte of a line every quarter of
// the timeout never finishes a request within IdleTimeout, and is cut off:
// otherwise a few such clients (a "slowloris") hold every worker for ever,
// however short the timeout.
func checkTrickle(k *testkit.T, impl Impl) {
	k.Helper()
	srv, _, _ := newServer(k, impl, Config{Workers: 1, IdleTimeout: hostileTimeout}, market)
	c := k.Dial(srv)
	line := "show" + strings.Repeat(" ", 39) + "\n" // a request, if it ever ends
	start := time.Now()
	for i := range len(line) {
		if err := c.TryWrite([]byte{line[i]}, fmt.Sprintf("%q", line[i:i+1])); err != nil {
			break // cut off: as it must be
		}
		time.Sleep(hostileTimeout / 4) // the client's own pace, not a synchronisation
	}
	text, n, err := readRecordN(c)
	if n > 0 {
		k.Fatalf("with IdleTimeout %v, a client sent one byte of \"show\\n\" (padded to %d bytes) every %v; "+
			"after %v it got a reply (%q).\nIdleTimeout bounds the wait for the next whole request: set the "+
			"read deadline before waiting for a request, not before each read of its bytes, or a client "+
			"that trickles bytes holds a worker for ever%s",
			hostileTimeout, len(line), hostileTimeout/4, time.Since(start).Round(time.Millisecond), text,
			c.Context())
	}
	if !testkit.IsClosed(err) {
		k.Fatalf("with IdleTimeout %v, a client trickled a request one byte every %v: want the connection "+
			"closed, got %s%s", hostileTimeout, hostileTimeout/4, testkit.Describe(err), c.Context())
	}
}

// checkSyncWhileTrading: the interval's write-back comes every SyncInterval
// while clients are connected, however busy they are. A client trades
// without pause (a round trip takes well under the interval); the stocks
// must still be written back. A timer restarted by each request (or an event
// loop's wait whose timeout restarts after each event) never fires while
// someone trades. A loaded machine can stall the client for an interval; a
// write-back that follows such a stall proves nothing and is not counted.
func checkSyncWhileTrading(k *testkit.T, impl Impl) {
	k.Helper()
	const interval = 100 * time.Millisecond
	s := make(syncs, 64)
	srv, _, _ := newServer(k, impl, Config{SyncInterval: interval, OnSync: s.hook}, market)
	m := newModel(parseStocks(k, market))
	c := k.Dial(srv)
	start := time.Now()
	deadline := start.Add(testkit.IOTimeout)
	last, stalled := start, time.Time{} // the last reply, and the last pause of interval/2 or more
	for n := 0; ; n++ {
		line := []string{"sell 5 1", "buy 5 1"}[n%2]
		exchange(k, c, line, m.apply(mustParse(line)))
		now := time.Now()
		if now.Sub(last) >= interval/2 {
			stalled = now
		}
		last = now
		select {
		case err := <-s:
			if err != nil {
				k.Fatalf("the write-back failed: %v", err)
			}
			if now.Sub(stalled) >= interval {
				return // written back while the client traded without pause
			}
		default:
		}
		if now.After(deadline) {
			k.Fatalf("with SyncInterval %v, a client traded without pause (%d trades in %v) and the stocks "+
				"were never written back while it did (OnSync was not called).\nThe write-back is due every "+
				"SyncInterval while clients are connected: count the interval from the last write-back, not "+
				"from the last request%s", interval, n+1, now.Sub(start).Round(time.Millisecond), c.Context())
		}
	}
}

// checkCloseReportsFailure: Close's own write-back is the last chance to
// save the trades; when it fails, Close returns its error (the operator must
// learn that trades are lost), and the old file stays intact.
func checkCloseReportsFailure(k *testkit.T, impl Impl) {
	k.Helper()
	s := make(syncs, 16)
	cfg, failing := failingDisk(s)
	srv, raw, path := newServer(k, impl, cfg, market)
	m := newModel(parseStocks(k, market))
	c := k.Dial(srv)
	exchange(k, c, "buy 9 2", m.apply(mustParse("buy 9 2")))
	err := raw.Close()
	if err == nil {
		k.Fatalf("a client bought (buy 9 2) and stayed; Close was called with the disk failing 7 bytes into " +
			"every write, and returned nil.\nClose's last write-back is the trades' last chance: return its " +
			"error, or the trades are lost without a word")
	}
	if got := readText(k, path); got != market {
		k.Fatalf("after Close's write-back failed (%v), stock.txt changed\n  want (the old file): %q\n"+
			"   got: %q", err, market, got)
	}
	onlyFile(k, path, "after Close's write-back failed")
	failing.Store(false) // a later Close may try once more: let it succeed
	srv.Close()
}

// acceptCounter is a listener that reports each connection it hands the
// server, so a check knows a client was accepted (and waits in the server's
// queue) rather than still in the kernel's backlog.
type acceptCounter struct {
	net.Listener
	accepted chan struct{}
}

func (l acceptCounter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		select {
		case l.accepted <- struct{}{}:
		default:
		}
	}
	return c, err
}

// checkQueuedAtClose: Close serves no new request. With the one worker
// stopped inside a trade, a second client is accepted and waits for a worker
// with a request sent; when Close comes, that client is closed without an
// answer (a request taken once the server is closing is not run), the trade
// in progress is answered, and Close returns in time.
func checkQueuedAtClose(k *testkit.T, impl Impl) {
	k.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen: %v", err)
	}
	ln := acceptCounter{Listener: inner, accepted: make(chan struct{}, 8)}
	p, cfg := newLockProbe(k, Config{Workers: 1, SyncInterval: never})
	srv, raw, _ := newServerOn(k, impl, cfg, market, ln)
	p.freeAtCleanup(k)
	m := newModel(parseStocks(k, market))
	busy := k.Dial(srv)
	held := p.holdFirst(k)
	busy.WriteLine("buy 5 1")
	held.awaitInside(k, "with 1 worker, a client sent buy 5 1")
	queued := k.Dial(srv)
	queued.WriteLine("show")
	// Until every goroutine is blocked: the show has reached the server, and
	// the connection waits for a worker with it, not for it.
	judge.Settle(testkit.IOTimeout)
	for range 2 {
		select {
		case <-ln.accepted:
		case <-time.After(testkit.IOTimeout):
			k.Fatalf("with 1 worker, two clients connected; the server did not accept both within %v "+
				"(the master accepts; only running a request waits for a worker)", testkit.IOTimeout)
		}
	}
	closed := make(chan error, 1)
	go func() { closed <- raw.Close() }()
	text, n, err := readRecordN(queued)
	if n > 0 {
		k.Fatalf("with the 1 worker inside a trade, a second client was accepted and waited with a show sent; "+
			"then Close was called, and the waiting client got an answer (%q).\nClose runs no new request: "+
			"a request that reaches a worker once the server is closing is not run, its connection closed%s",
			text, queued.Context())
	}
	if !testkit.IsClosed(err) {
		k.Fatalf("a client waiting for a worker when Close was called: want its connection closed, got %s%s",
			testkit.Describe(err), queued.Context())
	}
	held.free()
	expectRecord(k, busy, m.apply(mustParse("buy 5 1"))) // the request in progress is answered
	busy.ExpectClosed()
	busy.Close()
	select {
	case err := <-closed:
		if err != nil {
			k.Fatalf("Close returned %v", err)
		}
	case <-time.After(testkit.IOTimeout):
		k.Fatalf("with a client waiting for the one worker, Close did not return within %v", testkit.IOTimeout)
	}
	srv.Close()
}
