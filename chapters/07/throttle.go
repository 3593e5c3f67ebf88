package chatcore

import (
	"errors"
	"sync/atomic"
	"time"

	"serverlab/tools/given/chatcore/proto"
)

// Why a password check was not done. Their texts are the protocol's, so
// answerFailure sends them as they are, with the request's id.
var (
	//lint:ignore ST1005 the protocol's verbatim error text
	errBusy = errors.New(proto.MsgServerBusy)
	//lint:ignore ST1005 the protocol's verbatim error text
	errTooManyFailures = errors.New(proto.MsgTooManyFailures)
)

// hashQueue admits password hashes: at most GOMAXPROCS run at once (each
// takes Hash.MemoryKiB and a core), and a hash waits only if it can expect
// to start within wait, the client's patience. The queue is sized by time,
// not by a count: it measures how long a hash holds its slot (a moving
// average, so a machine that gets busier makes the queue shorter), and a
// hash that would find more ahead of it than the cores can hash in wait is
// refused at once, Server busy., without being computed. So a burst is
// served as far as the cores can serve it in time (the original load
// tester's 450 registrations at about 20 ms a hash on 2 cores: 4.5 s), and
// a client the server cannot serve in time hears so at once, inside its
// timeout, instead of waiting for a hash that comes too late for it —
// which is how a queue of 450 registrations made every later login time
// out. limit still bounds the waiting in count (each waiter is a goroutine
// and a connection), and a hash that admission let in but that the cores
// did not reach within wait (the machine slowed down) is refused then, or
// as soon as the server starts closing (done): Close waits for the readers,
// and a reader must not wait out a queue for a hash nobody will get.
type hashQueue struct {
	slots   chan struct{}
	waiting atomic.Int64
	limit   int64
	wait    time.Duration
	done    <-chan struct{}
	// cost is how long a hash holds its slot, in nanoseconds: a moving
	// average over the last hashes; samples how many it has seen.
	cost    atomic.Int64
	samples atomic.Int64
}

// minSamples is how many hashes the queue times before it refuses on its
// estimate: the first hashes of a process are the slowest (their memory is
// new to it, page faults and all), and a burst that arrives at once would
// otherwise be judged by them alone. Until then the wait's timer decides.
const minSamples = 8

func newHashQueue(slots, limit int, wait time.Duration, done <-chan struct{}) *hashQueue {
	return &hashQueue{slots: make(chan struct{}, slots), limit: int64(limit), wait: wait, done: done}
}

// run runs f in a slot, or returns errBusy if f cannot expect to start
// within the wait, the queue is full, or no slot frees up within the wait
// or before the server starts closing.
// Waiters get the slots in arrival order (a channel's blocked senders are
// served first in, first out).
func (q *hashQueue) run(f func()) error {
	n := q.waiting.Add(1)
	if n > q.limit || q.expectedWait(n) > q.wait {
		q.waiting.Add(-1)
		return errBusy
	}
	t := time.NewTimer(q.wait)
	defer t.Stop()
	select {
	case q.slots <- struct{}{}:
		q.waiting.Add(-1)
	case <-t.C:
		q.waiting.Add(-1)
		return errBusy
	case <-q.done:
		q.waiting.Add(-1)
		return errBusy
	}
	defer func() { <-q.slots }()
	start := time.Now()
	f()
	q.observe(time.Since(start))
	return nil
}

// expectedWait is how long the n-th waiter can expect to wait for a slot:
// n slots must free up first, and the cores free one every cost/slots.
func (q *hashQueue) expectedWait(n int64) time.Duration {
	if q.samples.Load() < minSamples {
		return 0
	}
	return time.Duration(n * q.cost.Load() / int64(cap(q.slots)))
}

// observe adds one hash's time in its slot to the moving average, with
// weight 1/8: a few hashes are enough to follow a machine that slows down.
func (q *hashQueue) observe(d time.Duration) {
	q.samples.Add(1)
	for {
		old := q.cost.Load()
		cost := int64(d)
		if old != 0 {
			cost = old + (int64(d)-old)/8
		}
		if q.cost.CompareAndSwap(old, cost) {
			return
		}
	}
}
