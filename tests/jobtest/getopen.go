package jobtest

import (
	"sync"
	"sync/atomic"
	"time"

	"serverlab/tests/testkit"
)

// checkGetWaitsWhileOpen: Get on an open queue never returns ok == false.
//
// A Get that waits with an if instead of a for can be woken by a Put's
// Signal and then find the queue empty again, because another consumer
// calling Get took the item before the woken one got the mutex back. It then
// returns (0, false) on an open queue, which a worker reads as "closed":
// the pool loses a worker for good. Every item is still delivered (the other
// consumers take it), so counting items cannot see it; here each consumer
// reports a false before Close. A queue of capacity 1 and more consumers than
// producers makes that overtaking the common case, not a rare interleaving:
// each item is announced to one waiter while busy consumers come back for
// the next.
func checkGetWaitsWhileOpen(k *testkit.T, impl Impl) {
	k.Helper()
	const producers, consumers, perProducer = 2, 8, 3000
	q := impl.NewQueue(1)
	var closing atomic.Bool
	var early atomic.Int64 // Gets that returned false on the open queue
	var firstAt atomic.Int64
	var got atomic.Int64
	earlyCh := make(chan struct{}) // closed at the first early false
	var prodWG, consWG sync.WaitGroup
	for p := range producers {
		prodWG.Go(func() {
			for i := range perProducer {
				if q.Put(p*perProducer+i) != nil {
					return
				}
			}
		})
	}
	for range consumers {
		consWG.Go(func() {
			for {
				_, ok := q.Get()
				if ok {
					got.Add(1)
					continue
				}
				if !closing.Load() {
					if early.Add(1) == 1 {
						firstAt.Store(got.Load())
						close(earlyCh)
					}
				}
				return
			}
		})
	}
	done := make(chan struct{})
	go func() {
		prodWG.Wait()
		// Every consumer that returned early is gone; the rest wait on an
		// empty queue until Close. Close once per consumer, so that a
		// Signal in Close fails here and not as a hang (close-wakes checks
		// Broadcast).
		closing.Store(true)
		for range consumers {
			q.Close()
		}
		consWG.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-earlyCh:
		// Fail at once: with consumers gone the producers may stall.
		closing.Store(true)
		for range consumers {
			q.Close()
		}
		<-done
	case <-time.After(4 * testkit.IOTimeout):
		closing.Store(true)
		q.Close()
		k.Fatalf("%d producers putting %d items each into a queue of capacity 1 with %d consumers did not finish "+
			"within %v: a lost wake-up (a Put that does not Signal, or a Signal before the waiter waits)?",
			producers, perProducer, consumers, 4*testkit.IOTimeout)
	}
	if n := early.Load(); n > 0 {
		k.Fatalf("%d producers put %d items each into an open queue of capacity 1, read by %d consumers: "+
			"got (0, false) from Get %d time(s) while the queue was still open, want (item, true) every time "+
			"(the first after %d items were got). A worker takes false for \"closed\" and stops for good. "+
			"Get must wait in a for loop (for q.n == 0 && !q.closed { Wait }), not an if: a Get woken by Put's "+
			"Signal can find that another Get took the item first", producers, perProducer, consumers, n, firstAt.Load())
	}
}
