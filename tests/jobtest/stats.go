package jobtest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/lab"
)

// Statistics checks exercise 3.7: the counts are exact under concurrency, and
// a snapshot never shows more requests answered than submitted.
func Statistics(t *testing.T, impl Impl) {
	k := testkit.New(t, "3.7")
	k.Run("exact-counts", func(t *testing.T) { checkExactCounts(testkit.New(t, k.Exercise()), impl) })
	k.Run("counted-before-written", func(t *testing.T) { checkCountedBeforeWritten(testkit.New(t, k.Exercise()), impl) })
	k.Run("counted-when-sent", func(t *testing.T) { checkCountedWhenSent(testkit.New(t, k.Exercise()), impl) })
	k.Run("refused-counted", func(t *testing.T) { checkRefusedCounted(testkit.New(t, k.Exercise()), impl) })
}

// checkRefusedCounted: every line that took an id is counted answered,
// whoever answers it and whatever the answer: also a line refused with
// "server shutting down" because Close came while its reader waited in Put.
// After Close, Submitted = Completed + Failed, exactly.
func checkRefusedCounted(k *testkit.T, impl Impl) {
	k.Helper()
	h := newHolder(1)
	k.OnAbort(h.releaseAll)
	defer h.releaseAll()
	lines := newLineCounter(3)
	raw, srv := newServer(k, impl, Config{Workers: 1, QueueCap: 1, OnJobStart: h.onJobStart, OnLineRead: lines.onLineRead})
	c := k.Dial(srv)
	c.Write([]byte("PRIME 7\nPRIME 11\nPRIME 13\n"), "3 PRIME lines: job 1 held in OnJobStart, job 2 queued, line 3 waiting in Put")
	lines.wait(k, "before Close")
	closed := make(chan error, 1)
	go func() { closed <- raw.Close() }()
	k.OnAbort(func() { <-closed })
	c.ExpectLine(fail("", msgShuttingDown).answer(3))
	h.releaseAll()
	for range 2 {
		c.ReadLine()
	}
	select {
	case <-closed:
	case <-time.After(testkit.IOTimeout):
		k.Fatalf("every job was answered, but Close did not return within %v", testkit.IOTimeout)
	}
	if got, want := impl.Stats(raw), (Stats{Submitted: 3, Completed: 2, Failed: 1}); got != want {
		k.Fatalf("3 lines: job 1 ran, job 2 was queued, line 3 waited in Put and was refused (%q) by Close; all "+
			"three answered\n  want stats: %+v\n   got stats: %+v\n(a line refused because the server is shutting "+
			"down took its id: count it failed, as every ERROR the reader answers)", msgShuttingDown, want, got)
	}
}

// checkCountedBeforeWritten: an answer is counted when it is made, before it
// is written. A client that does not read leaves answers unwritten in its
// outbox; once the server has stopped reading from it and the workers are
// idle, every line it read must be counted answered.
func checkCountedBeforeWritten(k *testkit.T, impl Impl) {
	k.Helper()
	raw, srv := newServerOn(k, impl, Config{Workers: 2, QueueCap: 4, MaxPending: 4096, WriteTimeout: time.Minute}, k.ListenSmall())
	mute := k.DialSmall(srv.Addr)
	// Valid and invalid lines: PRIME 0 is answered by the reader itself.
	sent, err := flood(mute, "PRIME 7\nPRIME 0\n", 4<<20, time.Second)
	if err == nil {
		k.Fatalf("a client that never reads sent %d lines and the server read them all (exercise 3.5 first)", sent)
	}
	deadline := time.Now().Add(testkit.IOTimeout)
	for {
		st := impl.Stats(raw)
		if st.Submitted > 0 && st.Completed+st.Failed == st.Submitted {
			return
		}
		if time.Now().After(deadline) && st.Submitted == 0 {
			k.Fatalf("a client wrote %d request lines into its socket and read no answer; %v later Stats still "+
				"says %+v: count every line in Submitted when it takes its id", 2*sent, testkit.IOTimeout, st)
		}
		if time.Now().After(deadline) {
			k.Fatalf("a client sent requests and read no answer; the server stopped reading from it, and %v later "+
				"its counts are still %+v: %d lines were answered but not counted. Count an answer when it is "+
				"made (before send), not after the write: a client that is slow to read must not make the "+
				"counts lag", testkit.IOTimeout, st, st.Submitted-st.Completed-st.Failed)
		}
		time.Sleep(time.Millisecond) // polling a counter; not synchronisation
	}
}

// checkExactCounts: clients send valid and invalid lines concurrently; every
// snapshot is possible and the final counts are exact.
func checkExactCounts(k *testkit.T, impl Impl) {
	k.Helper()
	raw, srv := newServer(k, impl, Config{Workers: 2, QueueCap: 4})
	if got := impl.Stats(raw); got != (Stats{}) {
		k.Fatalf("Stats of a new server: %+v, want all zero", got)
	}

	// Each client sends valid and invalid lines; a poller checks every
	// snapshot while they run.
	const clients, rounds = 4, 60
	round := []string{"HASH a", "PRIME 7", "PRIME 0", "", "SORT 100", "PRIME  5", "MATMUL 2", "FOO"}
	const validPerRound, invalidPerRound = 4, 4
	// Last, per client, a line that a worker fails (past the PRIME budget)
	// and a line that is too large, which ends the connection.
	const budgetLine = "PRIME 18446744073709551557"
	lastLines := budgetLine + "\n" + strings.Repeat("L", 5000) + "\n"
	stop := make(chan struct{})
	pollErr := make(chan string, 1)
	var pollWG sync.WaitGroup
	pollWG.Go(func() { pollStats(impl, raw, stop, pollErr) })
	stopPolling := sync.OnceFunc(func() { close(stop); pollWG.Wait() })
	defer stopPolling() // also when a check below fails

	var wg sync.WaitGroup
	errs := make(chan string, clients)
	for i := range clients {
		c := k.Dial(srv)
		var req strings.Builder
		for range rounds {
			for _, line := range round {
				req.WriteString(line + "\n")
			}
		}
		req.WriteString(lastLines)
		wg.Go(func() {
			if err := c.TryWrite([]byte(req.String()), "requests"); err != nil {
				errs <- fmt.Sprintf("client %d: write: %v", i, err)
			}
		})
		wg.Go(func() {
			for n := range rounds*len(round) + 2 {
				if _, err := c.TryReadLine(); err != nil {
					errs <- fmt.Sprintf("client %d: answer %d: %s", i, n+1, testkit.Describe(err))
					return
				}
			}
		})
	}
	wg.Wait()
	stopPolling()
	close(errs)
	for err := range errs {
		k.Fatalf("%s", err)
	}
	select {
	case msg := <-pollErr:
		k.Fatalf("%s", msg)
	default:
	}
	want := Stats{
		Submitted: clients * (rounds*uint64(len(round)) + 2),
		Completed: clients * rounds * validPerRound,
		Failed:    clients * (rounds*invalidPerRound + 2),
	}
	if got := impl.Stats(raw); got != want {
		k.Fatalf("%d clients each sent %d lines (%d valid, %d invalid, then %q, which a worker fails, and a "+
			"5000-byte line) and got every answer\n  want stats: %+v\n   got stats: %+v\n"+
			"(count every line when it takes its id, too-large ones included, and each answer before it is sent, "+
			"OK or ERROR, by whoever makes it; atomic counters)",
			clients, rounds*len(round)+2, rounds*validPerRound, rounds*invalidPerRound, budgetLine, want, got)
	}
}

// pollStats reads Stats until stop, and reports the first snapshot that is
// impossible: more answered than submitted, or a count going down.
func pollStats(impl Impl, raw lab.Server, stop <-chan struct{}, report chan<- string) {
	var last Stats
	for {
		select {
		case <-stop:
			return
		default:
		}
		s := impl.Stats(raw)
		switch {
		case s.Completed+s.Failed > s.Submitted:
			report <- fmt.Sprintf("a Stats snapshot showed more requests answered than submitted: %+v "+
				"(read Completed and Failed before Submitted, or take one lock)", s)
			return
		case s.Submitted < last.Submitted || s.Completed < last.Completed || s.Failed < last.Failed:
			report <- fmt.Sprintf("a count went down between two Stats snapshots: %+v, then %+v", last, s)
			return
		}
		last = s
	}
}
