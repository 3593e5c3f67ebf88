package guard

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// hold takes q's only slot until the returned func is called.
func hold(t *testing.T, q *FairQueue) (release func()) {
	t.Helper()
	in, out := make(chan struct{}), make(chan struct{})
	go q.Run("holder", func() { close(in); <-out })
	<-in
	return func() { close(out) }
}

// queued waits until q has n hashes in its lines.
func queued(t *testing.T, q *FairQueue, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		q.mu.Lock()
		w := q.waiting
		q.mu.Unlock()
		if w == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("want %d hashes waiting, got %d after 5 s", n, w)
		}
	}
}

// TestFairQueueRoundRobin: with one slot, 6 hashes queued from "abuser"
// and then 1 from "honest", the honest one runs second, not seventh.
func TestFairQueueRoundRobin(t *testing.T) {
	q := NewFairQueue(1, 100, 100, time.Minute, nil)
	release := hold(t, q)
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	enqueue := func(addr string, n int) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !q.Run(addr, func() { mu.Lock(); order = append(order, addr); mu.Unlock() }) {
				t.Errorf("%s refused", addr)
			}
		}()
		queued(t, q, n)
	}
	for i := range 6 {
		enqueue("abuser", i+1)
	}
	enqueue("honest", 7)
	release()
	wg.Wait()
	if fmt.Sprint(order[:2]) != "[abuser honest]" {
		t.Fatalf("6 hashes queued from abuser, then 1 from honest, one slot: want honest served second, got %v", order)
	}
}

// TestFairQueueCaps: past perAddr waiting from one address a hash is
// refused at once; another address still queues.
func TestFairQueueCaps(t *testing.T) {
	q := NewFairQueue(1, 2, 100, time.Minute, nil)
	release := hold(t, q)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); q.Run("a", func() {}) }()
		queued(t, q, i+1)
	}
	if q.Run("a", func() { t.Error("ran past the cap") }) {
		t.Fatal("a 3rd hash waiting from one address, perAddr 2: want refused, got run")
	}
	wg.Add(1)
	go func() { defer wg.Done(); q.Run("b", func() {}) }()
	queued(t, q, 3)
	release()
	wg.Wait()
}

// TestFairQueueWait: a line whose head waits wait for a slot is refused
// whole; once done is closed, a waiter is refused and the slot stays usable.
func TestFairQueueWait(t *testing.T) {
	done := make(chan struct{})
	q := NewFairQueue(1, 10, 10, 50*time.Millisecond, done)
	release := hold(t, q)
	refused := make(chan bool, 3)
	for range 3 {
		go func() { refused <- !q.Run("a", func() {}) }()
	}
	for range 3 {
		select {
		case r := <-refused:
			if !r {
				t.Fatal("a hash ran while the only slot was held")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the line was not refused 10 s after its head's wait (50 ms)")
		}
	}
	q.wait = time.Minute
	go func() { refused <- !q.Run("b", func() {}) }()
	queued(t, q, 1)
	close(done)
	if !<-refused {
		t.Fatal("after done: want the waiter refused")
	}
	release()
	if q.Run("c", func() {}) {
		t.Fatal("after done: want every hash refused")
	}
}
