package jobtest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"serverlab/tests/judge"
	"serverlab/tests/testkit"
	"serverlab/tools/given/lab"
)

// bubble is a synctest bubble's *testing.T with the exercise's hint on
// failures. Inside a bubble, failures must go through the bubble's t.
type bubble struct {
	*testing.T
	k *testkit.T
}

func (b bubble) Fatalf(format string, args ...any) {
	b.Helper()
	b.T.Fatalf("%s\n%s", fmt.Sprintf(format, args...), b.k.Where())
}

// inBubble runs f in a synctest bubble: there, synctest.Wait returns once
// every goroutine of the bubble is blocked (on a sync.Cond, a channel, a
// WaitGroup), which is how the checks tell "blocked" from "not yet run"
// without sleeping.
//
// Under tools/cmd/grade the queue is in another process, which no bubble can
// hold: there the check runs as it is, and settle waits for both processes
// to be blocked instead (judge.Settle).
func inBubble(k *testkit.T, f func(b bubble)) {
	k.Helper()
	if judge.IsJudge() {
		f(bubble{T: k.T, k: k})
		return
	}
	synctest.Test(k.T, func(t *testing.T) { f(bubble{T: t, k: k}) })
}

// settle is synctest.Wait, or judge.Settle under tools/cmd/grade.
func settle() {
	if judge.IsJudge() {
		judge.Settle(testkit.IOTimeout)
		return
	}
	synctest.Wait()
}

// call runs f in a goroutine and reports, through the returned function,
// whether it has returned yet (after synctest.Wait, "not yet" means blocked).
func call(f func()) (returned func() bool) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	return func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
}

func mustPut(b bubble, q Queue, item int, what string) {
	b.Helper()
	if err := q.Put(item); err != nil {
		if errors.Is(err, lab.ErrNotImplemented) {
			b.Fatalf("Put(%d): %v", item, err)
		}
		b.Fatalf("%s: Put(%d) returned %v, want nil", what, item, err)
	}
}

func mustGet(b bubble, q Queue, want int, what string) {
	b.Helper()
	got, ok := q.Get()
	if !ok || got != want {
		b.Fatalf("%s: Get() = (%d, %v), want (%d, true)", what, got, ok, want)
	}
}

// BoundedQueue checks exercise 3.2: the bounded queue built on sync.Mutex and
// sync.Cond.
func BoundedQueue(t *testing.T, impl Impl) {
	k := testkit.New(t, "3.2")
	for _, c := range []struct {
		name  string
		check func(bubble, Impl)
	}{
		{"fifo", checkFIFO}, {"put-blocks", checkPutBlocks}, {"get-blocks", checkGetBlocks},
		{"close-wakes", checkCloseWakes}, {"close-drains", checkCloseDrains},
		{"close-fails-waiting-puts", checkCloseFailsWaitingPuts},
	} {
		k.Run(c.name, func(t *testing.T) { inBubble(testkit.New(t, k.Exercise()), func(b bubble) { c.check(b, impl) }) })
	}
	k.Run("many-producers-consumers", func(t *testing.T) { checkManyProducersConsumers(testkit.New(t, k.Exercise()), impl) })
	k.Run("get-lets-go", func(t *testing.T) { checkGetLetsGo(testkit.New(t, k.Exercise()), impl) })
	k.Run("get-waits-while-open", func(t *testing.T) { checkGetWaitsWhileOpen(testkit.New(t, k.Exercise()), impl) })
}

// checkGetLetsGo: the queue lets go of what Get hands out. A ring buffer
// whose slot still holds the item after Get keeps up to capacity finished
// items alive (in the server: jobs, and through them their connections)
// until Puts overwrite them, which an idle server never does. The check
// fills a queue with 64 items of 64 KiB, takes them all, and measures the
// live heap of the process that runs the queue.
func checkGetLetsGo(k *testkit.T, impl Impl) {
	k.Helper()
	if impl.NewBytesQueue == nil {
		k.Fatalf("test bug: the chapter's Impl has no NewBytesQueue")
	}
	const items, size = 64, 64 << 10
	q := impl.NewBytesQueue(items)
	defer q.Close()
	before := testkit.ReadFootprint()
	for i := range items {
		if err := q.Put(make([]byte, size)); err != nil {
			k.Fatalf("Put of item %d of %d into an open queue of capacity %d: %v", i+1, items, items, err)
		}
	}
	for i := range items {
		if _, ok := q.Get(); !ok {
			k.Fatalf("Get of item %d of %d: ok = false on an open queue that holds it", i+1, items)
		}
	}
	after := testkit.ReadFootprint()
	if grew := int64(after.Heap) - int64(before.Heap); grew > items*size/4 {
		k.Fatalf("put %d items of %d KiB into a queue and took them all out again: the live heap grew by %d KiB "+
			"(want about 0): the queue keeps what Get handed out. Get must clear the slot it takes the item from "+
			"(q.items[q.head] = zero), or a finished job stays alive until a Put overwrites its slot",
			items, size>>10, grew>>10)
	}
}

func checkFIFO(b bubble, impl Impl) {
	q := impl.NewQueue(5)
	defer q.Close()
	for round := range 3 { // wraps around a ring buffer
		for i := range 4 {
			mustPut(b, q, round*10+i, "a queue of capacity 5")
		}
		for i := range 4 {
			mustGet(b, q, round*10+i, fmt.Sprintf("items come out in the order they went in (round %d)", round+1))
		}
	}
}

func checkPutBlocks(b bubble, impl Impl) {
	q := impl.NewQueue(2)
	defer q.Close()
	mustPut(b, q, 1, "an empty queue of capacity 2")
	mustPut(b, q, 2, "a queue of capacity 2 holding 1 item")
	var err error
	returned := call(func() { err = q.Put(3) })
	settle()
	if returned() {
		b.Fatalf("Put(3) on a full queue of capacity 2 returned %v at once: it must wait until there is room", err)
	}
	mustGet(b, q, 1, "Get from a full queue with a Put waiting")
	settle()
	if !returned() {
		b.Fatalf("Get made room in a full queue, but the waiting Put(3) is still blocked: signal a waiting producer when an item is removed")
	}
	if err != nil {
		b.Fatalf("the waiting Put(3) returned %v after Get made room, want nil", err)
	}
	mustGet(b, q, 2, "after the waiting Put(3) went in")
	mustGet(b, q, 3, "after the waiting Put(3) went in")
}

func checkGetBlocks(b bubble, impl Impl) {
	q := impl.NewQueue(4)
	defer q.Close()
	// Probe Put first, so that a stub fails with "not implemented".
	mustPut(b, q, 0, "an empty queue")
	mustGet(b, q, 0, "a queue holding 0")
	var got, ok = -1, false
	returned := call(func() { got, ok = q.Get() })
	settle()
	if returned() {
		b.Fatalf("Get() on an empty queue returned (%d, %v) at once: it must wait for an item", got, ok)
	}
	mustPut(b, q, 9, "an empty queue with a Get waiting")
	settle()
	if !returned() {
		b.Fatalf("Put(9) into an empty queue did not wake the waiting Get: signal a waiting consumer when an item is added")
	}
	if got != 9 || !ok {
		b.Fatalf("the waiting Get() returned (%d, %v) after Put(9), want (9, true)", got, ok)
	}
}

func checkCloseWakes(b bubble, impl Impl) {
	const waiters = 3
	empty := impl.NewQueue(2)
	full := impl.NewQueue(1)
	defer func() {
		// If Close wakes one waiter at a time (Signal), closing once per
		// waiter still lets them all out, so that the check fails instead of
		// leaving goroutines blocked forever.
		for range waiters {
			empty.Close()
			full.Close()
		}
	}()
	mustPut(b, full, 1, "an empty queue of capacity 1")
	gets := make([]func() bool, waiters)
	puts := make([]func() bool, waiters)
	putErrs := make([]error, waiters)
	getOK := make([]bool, waiters)
	for i := range waiters {
		gets[i] = call(func() { _, getOK[i] = empty.Get() })
		puts[i] = call(func() { putErrs[i] = full.Put(100 + i) })
	}
	settle()
	for i := range waiters {
		if gets[i]() || puts[i]() {
			b.Fatalf("Get on an empty queue or Put on a full one returned without waiting")
		}
	}
	empty.Close()
	full.Close()
	settle()
	for i := range waiters {
		if !gets[i]() {
			b.Fatalf("Close did not wake every Get waiting on an empty queue (%d waiting): Broadcast, not Signal", waiters)
		}
		if !puts[i]() {
			b.Fatalf("Close did not wake every Put waiting on a full queue (%d waiting): Broadcast, not Signal", waiters)
		}
		if getOK[i] {
			b.Fatalf("a Get woken by Close on an empty queue returned ok = true, want false (closed and empty)")
		}
		if putErrs[i] == nil {
			b.Fatalf("a Put woken by Close returned nil: after Close, Put must fail and not add its item")
		}
	}
	mustGet(b, full, 1, "a closed queue still holding the item put before Close")
	if got, ok := full.Get(); ok {
		b.Fatalf("a Put woken by Close added its item: Get returned (%d, true), want (0, false)", got)
	}
}

func checkCloseDrains(b bubble, impl Impl) {
	q := impl.NewQueue(3)
	mustPut(b, q, 1, "an empty queue")
	mustPut(b, q, 2, "a queue holding 1")
	q.Close()
	if err := q.Put(3); err == nil {
		b.Fatalf("Put after Close returned nil, want an error")
	}
	mustGet(b, q, 1, "a closed queue holding 1 and 2 (Get drains what is left)")
	mustGet(b, q, 2, "a closed queue holding 2")
	for range 2 {
		if got, ok := q.Get(); ok {
			b.Fatalf("Get on a closed, drained queue returned (%d, true), want (0, false)", got)
		}
	}
	q.Close() // closing twice is harmless
}

// checkManyProducersConsumers: every item put is got exactly once, with many
// producers and consumers on a small queue (run it with -race).
func checkManyProducersConsumers(k *testkit.T, impl Impl) {
	k.Helper()
	const producers, consumers, perProducer = 8, 8, 2000
	q := impl.NewQueue(4)
	var got [consumers][]int
	var prodWG, consWG sync.WaitGroup
	putErrs := make(chan error, producers)
	for p := range producers {
		prodWG.Go(func() {
			for i := range perProducer {
				if err := q.Put(p*perProducer + i); err != nil {
					putErrs <- err
					return
				}
			}
		})
	}
	for c := range consumers {
		consWG.Go(func() {
			for {
				item, ok := q.Get()
				if !ok {
					return
				}
				got[c] = append(got[c], item)
			}
		})
	}
	done := make(chan struct{})
	go func() {
		prodWG.Wait()
		for range consumers { // once per consumer: close-wakes checks Broadcast; here a Signal must not hang
			q.Close()
		}
		consWG.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(4 * testkit.IOTimeout):
		q.Close()
		k.Fatalf("%d producers putting %d items each into a queue of capacity 4, with %d consumers, did not finish "+
			"within %v: a lost wake-up (Signal before the waiter waits, or an if instead of a for around Wait)?",
			producers, perProducer, consumers, 4*testkit.IOTimeout)
	}
	close(putErrs)
	for err := range putErrs {
		k.Fatalf("Put on an open queue failed: %v", err)
	}
	seen := make([]int, producers*perProducer)
	for c := range consumers {
		last := map[int]int{} // per producer: items of one producer come out in order
		for _, item := range got[c] {
			if item < 0 || item >= len(seen) {
				k.Fatalf("Get returned %d, which was never put", item)
			}
			seen[item]++
			p := item / perProducer
			if prev, ok := last[p]; ok && item < prev {
				k.Fatalf("one consumer got producer %d's items out of order: %d after %d", p, item, prev)
			}
			last[p] = item
		}
	}
	for item, n := range seen {
		if n != 1 {
			k.Fatalf("with %d producers and %d consumers, item %d was got %d times, want exactly once",
				producers, consumers, item, n)
		}
	}
}
