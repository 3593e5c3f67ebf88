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
	"serverlab/tools/given/stockproto"
)

// WorkerPool checks exercise 4.5: a pre-threaded server whose workers run
// requests and never wait for one. With the default of 4 workers, 4 requests
// run at once: while 4 trades are stopped inside their stocks' locks, a
// fifth client's request waits, unanswered, until one of them ends. The same
// with Config.Workers = 2 and a third client. Silent clients hold no worker:
// however many there are, a client with a request is answered at once.
// Chapter 05's event loop serves everyone from one goroutine and does not run
// this check.
func WorkerPool(t *testing.T, impl Impl) {
	k := testkit.New(t, "4.5")
	checkPool(k, impl, 0, 4)
	checkPool(k, impl, 2, 2)
	checkSilentHoldNoWorker(k, impl)
	checkIdleClients(k, impl)
	checkSteadyClient(k, impl, 0)
	checkSteadyClient(k, impl, steadyIdle/4)
	checkDeadlinesKept(k, impl)
	checkNonReader(k, impl)
	checkTrickle(k, impl)
	checkZeroConfig(k, impl)
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

// checkIdleClients: a client silent for IdleTimeout is disconnected, and
// those silent clients never keep a client with a request from being served.
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
			"(%v).\nWith IdleTimeout %v, a silent client is disconnected (a read deadline before each "+
			"wait for a request), and it never holds a worker%s", err, hostileTimeout, victim.Context())
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
// setting, which must run exactly workers requests at once. Each of workers
// clients sends a trade that the suite stops inside its stock's lock (a
// stock of its own); a further client's request, which takes no stock's lock
// (an empty line), must then wait: every worker is busy. Once one trade is
// let go, that request is answered.
func checkPool(k *testkit.T, impl Impl, setting, workers int) {
	k.Helper()
	p, cfg := newLockProbe(k, Config{Workers: setting})
	srv, _, _ := newServer(k, impl, cfg, market)
	p.freeAtCleanup(k)
	m := newModel(parseStocks(k, market))
	what := fmt.Sprintf("with Workers = %d", setting)
	if setting == 0 {
		what = "with the default of 4 workers"
	}
	stocks := parseStocks(k, market)
	held := p.holdEach(k, workers)
	busy := make([]*testkit.Conn, workers)
	for i := range busy {
		busy[i] = k.Dial(srv)
		busy[i].WriteLine(fmt.Sprintf("buy %d 1", stocks[i].ID))
		held[i].awaitInside(k, fmt.Sprintf("%s, client %d of %d sent buy %d 1 while the others' trades were "+
			"stopped inside their stocks' locks (does every worker run requests? is Config.Workers used?)",
			what, i+1, workers, stocks[i].ID))
	}
	extra := k.Dial(srv)
	extra.WriteLine("")
	extra.NetConn().SetReadDeadline(time.Now().Add(testkit.QuietWindow))
	var b [1]byte
	if n, _ := extra.NetConn().Read(b[:]); n > 0 {
		k.Fatalf("%s all running a trade (stopped inside the stock's lock), one more client's empty line got "+
			"an answer: at most Workers requests run at once, and the next one waits for a free worker (is "+
			"every connection getting its own goroutine? is Config.Workers used?)%s", what, extra.Context())
	}
	extra.NetConn().SetReadDeadline(time.Time{})

	held[0].free()
	expectRecord(k, busy[0], m.apply(mustParse(fmt.Sprintf("buy %d 1", stocks[0].ID))))
	// A worker is free now: the waiting request is run.
	expectRecord(k, extra, stockproto.PleaseType)
	for i, c := range busy[1:] {
		held[i+1].free()
		expectRecord(k, c, m.apply(mustParse(fmt.Sprintf("buy %d 1", stocks[i+1].ID))))
	}
	exchange(k, extra, "show", m.apply(mustParse("show")))
}

// checkSilentHoldNoWorker: clients that connect and say nothing, twice as
// many as workers, some after a first request, hold no worker. With an
// IdleTimeout far longer than the suite waits, a client that sends show is
// answered at once. A worker that serves a connection from start to end
// waits in its client's read: then the silent clients hold every worker
// until IdleTimeout, and the client behind them waits that long (with 4
// workers, 8 silent clients and the default 30 s, 67.5 s).
func checkSilentHoldNoWorker(k *testkit.T, impl Impl) {
	k.Helper()
	const workers = 2
	idle := 4 * testkit.IOTimeout
	srv, _, _ := newServer(k, impl, Config{Workers: workers, IdleTimeout: idle}, market)
	m := newModel(parseStocks(k, market))
	for i := range 2 * workers {
		c := k.Dial(srv)
		if i%2 == 0 {
			exchange(k, c, "show", m.apply(mustParse("show"))) // served, then silent
		}
	}
	victim := k.Dial(srv)
	victim.WriteLine("show")
	got, err := readRecord(victim)
	if err != nil {
		k.Fatalf("with %d workers and IdleTimeout %v, %d clients connected and went silent (half of them after "+
			"a show); one more sent show and got no answer within %v (%v).\nA silent client must hold no worker: "+
			"a worker runs the requests a client has sent and gives the connection back to wait for the next "+
			"one elsewhere (the waiting room), or a few idle clients stall everyone for IdleTimeout%s",
			workers, idle, 2*workers, testkit.IOTimeout, err, victim.Context())
	}
	if want := m.apply(mustParse("show")); got != want {
		k.Fatalf("wrong reply\n  want: %q\n   got: %q%s", want, got, victim.Context())
	}
}
