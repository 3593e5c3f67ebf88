package jobtest

import (
	"time"

	"serverlab/tests/judge"
	"serverlab/tests/testkit"
)

// checkPoolSharedByListeners: Config.Workers bounds the jobs of the whole
// server, however many listeners it serves. Serve starts the pool the first
// time only; a Serve that starts a pool of its own doubles the workers with a
// second listener (the -addr flag given twice, or a Unix socket beside TCP),
// and every bound the lesson measures with it.
//
// With Workers 1 and job 1 held in OnJobStart, job 2 from a client of the
// second listener must not start until job 1 is released. "Not started" is
// decided when the subject and the judge are both idle (judge.Settle) under
// the grader, so a second pool's worker, which would take job 2 at once, is
// caught every time; under go test, after a short quiet spell.
func checkPoolSharedByListeners(k *testkit.T, impl Impl) {
	k.Helper()
	h := newHolder(1)
	k.OnAbort(h.releaseAll)
	defer h.releaseAll()
	lines := newLineCounter(2)
	requireQueueAndPool(k, impl)
	raw, err := impl.NewServer(Config{Workers: 1, QueueCap: 8, OnJobStart: h.onJobStart, OnLineRead: lines.onLineRead})
	if err != nil {
		k.Fatalf("NewServer: %v", err)
	}
	first, second := k.Serve(raw), k.Serve(raw)
	a := k.Dial(first)
	a.WriteLine("HASH a")
	select {
	case id := <-h.started:
		if id != 1 {
			k.Fatalf("sent \"HASH a\" as the only request; the first job started has id %d, want 1", id)
		}
	case <-time.After(testkit.IOTimeout):
		k.Fatalf("sent \"HASH a\" to a server with Workers 1: no job started within %v (is OnJobStart called?)",
			testkit.IOTimeout)
	}
	b := k.Dial(second)
	b.WriteLine("HASH b")
	lines.wait(k, "\"HASH a\" on the first listener, \"HASH b\" on the second")
	var quiet <-chan time.Time
	if judge.IsJudge() {
		judge.Settle(testkit.IOTimeout)
		quiet = time.After(0)
	} else {
		quiet = time.After(250 * time.Millisecond)
	}
	select {
	case id := <-h.started:
		k.Fatalf("one server (Workers 1) serving two listeners: job 1 from the first listener is held in OnJobStart, "+
			"sent \"HASH b\" to the second; want job 2 to wait in the queue, got job %d started beside job 1: two "+
			"jobs at once with one worker. Likely cause: Serve starts a pool of its own each time it is called; "+
			"start the pool once per server (the first Serve, under s.mu) and let every listener share it", id)
	case <-quiet:
	}
	h.releaseAll()
	for _, c := range []struct {
		conn *testkit.Conn
		want uint64
	}{{a, 1}, {b, 2}} {
		got := c.conn.ReadLine()
		if id, result, ok := parseOK(got); !ok || id != c.want || result == "" {
			k.Fatalf("after job 1 was released: want \"OK %d <hash>\", got %q", c.want, got)
		}
	}
}
