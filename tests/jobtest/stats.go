package jobtest

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"serverlab/tests/testkit"
	"serverlab/tools/lab"
)

// Statistics checks exercise 3.7: the counts are exact under concurrency, and
// a snapshot never shows more requests answered than submitted.
func Statistics(t *testing.T, impl Impl) {
	k := testkit.New(t, "3.7")
	raw, srv := newServer(k, impl, Config{Workers: 2, QueueCap: 4})
	if got := impl.Stats(raw); got != (Stats{}) {
		k.Fatalf("Stats of a new server: %+v, want all zero", got)
	}

	// Each client sends valid and invalid lines; a poller checks every
	// snapshot while they run.
	const clients, rounds = 4, 60
	round := []string{"HASH a", "PRIME 7", "PRIME 0", "", "SORT 100", strings.Repeat("L", 5000), "MATMUL 2", "FOO"}
	const validPerRound, invalidPerRound = 4, 4
	stop := make(chan struct{})
	pollErr := make(chan string, 1)
	var pollWG sync.WaitGroup
	pollWG.Go(func() { pollStats(impl, raw, stop, pollErr) })

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
		wg.Go(func() {
			if err := c.TryWrite([]byte(req.String()), "requests"); err != nil {
				errs <- fmt.Sprintf("client %d: write: %v", i, err)
			}
		})
		wg.Go(func() {
			for n := range rounds * len(round) {
				if _, err := c.TryReadLine(); err != nil {
					errs <- fmt.Sprintf("client %d: answer %d: %s", i, n+1, testkit.Describe(err))
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	pollWG.Wait()
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
		Submitted: clients * rounds * uint64(len(round)),
		Completed: clients * rounds * validPerRound,
		Failed:    clients * rounds * invalidPerRound,
	}
	if got := impl.Stats(raw); got != want {
		k.Fatalf("%d clients each sent %d lines (%d valid, %d invalid) and got every answer\n  want stats: %+v\n   got stats: %+v\n"+
			"(count every line when it takes its id, and each answer before it is written; atomic counters)",
			clients, rounds*len(round), rounds*validPerRound, rounds*invalidPerRound, want, got)
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
