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
// takes Hash.MemoryKiB and a core), at most limit wait, and none waits
// longer than wait. A hash that cannot start in time is not computed at
// all: its request is answered Server busy. at once, inside the client's
// timeout (the original's load tester gives up after 10 s), instead of being
// computed for a client that has given up — which is how a queue of 450
// registrations made every later login time out.
type hashQueue struct {
	slots   chan struct{}
	waiting atomic.Int64
	limit   int64
	wait    time.Duration
}

func newHashQueue(slots, limit int, wait time.Duration) *hashQueue {
	return &hashQueue{slots: make(chan struct{}, slots), limit: int64(limit), wait: wait}
}

// run runs f in a slot, or returns errBusy if the queue is full or no slot
// frees up within the wait. Waiters get the slots in arrival order (a
// channel's blocked senders are served first in, first out).
func (q *hashQueue) run(f func()) error {
	if q.waiting.Add(1) > q.limit {
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
	}
	defer func() { <-q.slots }()
	f()
	return nil
}
