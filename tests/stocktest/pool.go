package stocktest

import (
	"context"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"serverlab/tests/testkit"
)

// WorkerPool checks exercise 4.5: a pre-threaded server. With the default of
// 4 workers, 4 clients are served at once; a fifth is accepted but waits,
// unanswered, until one of the four leaves, and is then served. The same with
// Config.Workers = 2 and a third client. Chapter 05's event loop serves
// everyone at once and does not run this check.
func WorkerPool(t *testing.T, impl Impl) {
	k := testkit.New(t, "4.5")
	checkPool(k, impl, 0, 4)
	checkPool(k, impl, 2, 2)
	checkIdleClients(k, impl)
	checkSteadyClient(k, impl, 0)
	checkSteadyClient(k, impl, steadyIdle/4)
	checkNonReader(k, impl)
	checkTrickle(k, impl)
}

// steadyIdle is the IdleTimeout of checkSteadyClient: long beside the gap
// between two requests of a client in a loop, even on a loaded machine.
const steadyIdle = 750 * time.Millisecond

// checkSteadyClient: IdleTimeout bounds the silence before each request, not
// the life of a connection. A client that trades for two idle timeouts,
// pausing pause after each reply, stays connected (a read deadline set once,
// when the client connects, cuts it off). With pauses of a quarter of the
// timeout the server is waiting most of the time, so a deadline that is
// moved only once it has passed, instead of while enough of it is left, falls
// inside a wait and cuts the client off too.
func checkSteadyClient(k *testkit.T, impl Impl, pause time.Duration) {
	k.Helper()
	srv, _, _ := newServer(k, impl, Config{IdleTimeout: steadyIdle}, market)
	m := newModel(parseStocks(k, market))
	c := k.Dial(srv)
	start := time.Now()
	for n := 1; time.Since(start) < 2*steadyIdle; n++ {
		line := "show"
		if n%2 == 0 {
			line = fmt.Sprintf("sell %d 1", []int{5, 3, 8}[n%3])
		}
		c.WriteLine(line)
		got, err := readRecord(c)
		if err != nil {
			k.Fatalf("with IdleTimeout %v, a client that sent a request %v after each reply was cut off "+
				"after %v (request %d: %v).\nIdleTimeout bounds the wait for the next request: before each "+
				"wait, make sure the read deadline is at least IdleTimeout away (not once per connection, "+
				"and not only once it has passed)%s",
				steadyIdle, pause, time.Since(start).Round(time.Millisecond), n, err, c.Context())
		}
		if want := m.apply(mustParse(line)); got != want {
			k.Fatalf("wrong reply\n  want: %q\n   got: %q%s", want, got, c.Context())
		}
		time.Sleep(pause) // the client's own pace, not a synchronisation
	}
}

// hostileTimeout is the IdleTimeout and WriteTimeout of the checks of
// hostile clients: short beside IOTimeout, so a server that applies them
// always answers the victim in time, and one that does not never does.
const hostileTimeout = 100 * time.Millisecond

// checkIdleClients: as many idle clients as workers must not stop the
// server. Each holds a worker only until IdleTimeout; then it is
// disconnected and the client waiting behind them is served.
func checkIdleClients(k *testkit.T, impl Impl) {
	k.Helper()
	srv, _, _ := newServer(k, impl, Config{Workers: 2, IdleTimeout: hostileTimeout}, market)
	m := newModel(parseStocks(k, market))
	idle := []*testkit.Conn{k.Dial(srv), k.Dial(srv)}
	exchange(k, idle[0], "show", m.apply(mustParse("show"))) // served, then silent
	victim := k.Dial(srv)
	victim.WriteLine("show")
	got, err := readRecord(victim)
	if err != nil {
		k.Fatalf("with 2 workers, 2 clients connected and went silent; a third sent show and got no answer "+
			"(%v).\nWith IdleTimeout %v, a worker must give up a silent client (a read deadline before each "+
			"read) or a few idle connections stop the server%s", err, hostileTimeout, victim.Context())
	}
	if want := m.apply(mustParse("show")); got != want {
		k.Fatalf("wrong reply\n  want: %q\n   got: %q%s", want, got, victim.Context())
	}
	for _, c := range idle {
		c.ExpectClosed()
	}
}

// checkNonReader: a client that pipelines shows and never reads the replies
// fills the socket buffers, and the worker's write blocks. With WriteTimeout,
// the worker gives up that client and serves the next one.
func checkNonReader(k *testkit.T, impl Impl) {
	k.Helper()
	ln, err := (&net.ListenConfig{Control: smallBuffer(syscall.SO_SNDBUF)}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen: %v", err)
	}
	srv, _, _ := newServerOn(k, impl, Config{Workers: 1, WriteTimeout: hostileTimeout}, market, ln)
	m := newModel(parseStocks(k, market))
	hog := k.DialWith(&net.Dialer{Control: smallBuffer(syscall.SO_RCVBUF)}, srv)
	hog.Write([]byte(strings.Repeat("show\n", pipelinedShows)), `"show\n" × 1600 (in one write, then not read)`)
	expectRecord(k, hog, m.apply(mustParse("show"))) // the worker serves it now, and reads no more of them
	victim := k.Dial(srv)
	victim.WriteLine("show")
	got, err := readRecord(victim)
	if err != nil {
		k.Fatalf("with 1 worker, a client sent 1600 shows and read none of the replies; the next client's "+
			"show got no answer (%v).\nWith WriteTimeout %v, a worker must give up a client that does not "+
			"take its replies (a write deadline before each write)%s", err, hostileTimeout, victim.Context())
	}
	if want := m.apply(mustParse("show")); got != want {
		k.Fatalf("wrong reply\n  want: %q\n   got: %q%s", want, got, victim.Context())
	}
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
