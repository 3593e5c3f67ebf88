package jobtest

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"serverlab/tests/testkit"
	"serverlab/tools/given/lab"
)

// gate holds the work of a pool under test: each call records its worker and
// item and waits until the check releases it.
type gate struct {
	mu      sync.Mutex
	started []int // items, in the order their work started
	workers map[int]int
	done    []int // items whose work returned
	release chan struct{}
}

func newGate() *gate {
	return &gate{workers: map[int]int{}, release: make(chan struct{}, 1000)}
}

func (g *gate) work(worker, item int) {
	g.mu.Lock()
	g.started = append(g.started, item)
	g.workers[item] = worker
	g.mu.Unlock()
	<-g.release
	g.mu.Lock()
	g.done = append(g.done, item)
	g.mu.Unlock()
}

func (g *gate) counts() (started, done int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.started), len(g.done)
}

// Pool checks exercise 3.3: a fixed pool of workers drains the queue, with
// exactly Workers jobs running at once.
func Pool(t *testing.T, impl Impl) {
	k := testkit.New(t, "3.3")
	k.Run("concurrency", func(t *testing.T) {
		inBubble(testkit.New(t, k.Exercise()), func(b bubble) { checkPoolConcurrency(b, impl) })
	})
	k.Run("drains-on-close", func(t *testing.T) {
		inBubble(testkit.New(t, k.Exercise()), func(b bubble) { checkPoolDrainsOnClose(b, impl) })
	})
}

func checkPoolConcurrency(b bubble, impl Impl) {
	const workers = 3
	g := newGate()
	q, wait := impl.StartPool(workers, 16, g.work)
	if err := q.Put(0); errors.Is(err, lab.ErrNotImplemented) {
		b.Fatalf("the pool needs an earlier exercise, the bounded queue (3.2): %v", err)
	}
	defer func() { // unblock everything, so that a failure does not hang
		for range workers { // once per worker, in case Close wakes only one
			q.Close()
		}
		close(g.release)
		wait()
	}()
	for i := 1; i < workers; i++ {
		mustPut(b, q, i, "the pool's queue")
	}
	settle()
	if started, _ := g.counts(); started != workers {
		b.Fatalf("%d workers, %d queued jobs that each wait on a barrier: %d started, want all %d "+
			"(start Workers goroutines, each looping on Get)", workers, workers, started, workers)
	}
	ids := slices.Sorted(func(yield func(int) bool) {
		for _, w := range g.workers {
			if !yield(w) {
				return
			}
		}
	})
	if !slices.Equal(ids, []int{0, 1, 2}) {
		b.Fatalf("the %d running jobs were given worker numbers %v, want each of 0..%d once", workers, ids, workers-1)
	}

	mustPut(b, q, workers, "the pool's queue")
	settle()
	if started, _ := g.counts(); started != workers {
		b.Fatalf("%d workers busy and one more job queued: %d jobs started, want %d (at most Workers at once)",
			workers, started, workers)
	}
	g.release <- struct{}{}
	settle()
	if started, done := g.counts(); done != 1 || started != workers+1 {
		b.Fatalf("one of %d busy workers finished, with one job queued: %d started, %d done; want %d started, 1 done "+
			"(a worker that finishes takes the next job)", workers, started, done, workers+1)
	}

	returned := call(wait)
	settle()
	if returned() {
		b.Fatalf("the pool's Wait returned while the queue was open and jobs were running: it must wait for the workers")
	}
	for range workers {
		g.release <- struct{}{}
	}
	settle()
	if returned() {
		b.Fatalf("the pool's Wait returned while the queue was still open: workers must keep waiting for jobs until Close")
	}
	q.Close()
	settle()
	if !returned() {
		b.Fatalf("the queue was closed and drained, but the pool's Wait has not returned: a worker must return when Get reports closed")
	}
	if _, done := g.counts(); done != workers+1 {
		b.Fatalf("%d jobs queued, %d done", workers+1, done)
	}
}

// checkPoolDrainsOnClose: jobs queued before Close still run, each once.
func checkPoolDrainsOnClose(b bubble, impl Impl) {
	const workers, jobs = 2, 10
	g := newGate()
	for range jobs {
		g.release <- struct{}{}
	}
	q, wait := impl.StartPool(workers, jobs, g.work)
	for i := range jobs {
		mustPut(b, q, i, "the pool's queue")
	}
	q.Close()
	returned := call(wait)
	settle()
	if !returned() {
		b.Fatalf("%d jobs queued and the queue closed: the pool's Wait did not return", jobs)
	}
	slices.Sort(g.done)
	want := make([]int, jobs)
	for i := range want {
		want[i] = i
	}
	if !slices.Equal(g.done, want) {
		b.Fatalf("%d jobs queued before Close: jobs done %v, want each of 0..%d once", jobs, g.done, jobs-1)
	}
}
