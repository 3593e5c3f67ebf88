package chatcore

import (
	"errors"
	"net"
	"sync"
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

// failureLimiter counts failed logins per client address: each address has
// a bucket of limit failures, refilled evenly over window. An address whose
// bucket is empty gets Too many failed logins, try again later. at once,
// without a hash: guessing passwords costs the guesser time and the server
// nothing. (fail2ban's default is 5 failures in 10 minutes, sshd closes a
// connection after 6; a chat server sees more honest typos, and behind a
// NAT many users share an address, so the default is more generous.)
type failureLimiter struct {
	limit  float64
	window time.Duration

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

// maxAddresses bounds the limiter's map; past it, full buckets are swept.
const maxAddresses = 1 << 16

func newFailureLimiter(limit int, window time.Duration) *failureLimiter {
	return &failureLimiter{limit: float64(limit), window: window, buckets: make(map[string]*bucket)}
}

// refill brings b up to now; the caller holds l.mu.
func (l *failureLimiter) refill(b *bucket, now time.Time) {
	b.tokens = min(l.limit, b.tokens+now.Sub(b.at).Seconds()*l.limit/l.window.Seconds())
	b.at = now
}

// allowed reports whether addr may try a password now.
func (l *failureLimiter) allowed(addr string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[addr]
	if !ok {
		return true
	}
	l.refill(b, time.Now())
	return b.tokens >= 1
}

// failed takes one failure from addr's bucket.
func (l *failureLimiter) failed(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	b, ok := l.buckets[addr]
	if !ok {
		if len(l.buckets) >= maxAddresses {
			l.sweep(now)
		}
		b = &bucket{tokens: l.limit, at: now}
		l.buckets[addr] = b
	}
	l.refill(b, now)
	b.tokens = max(0, b.tokens-1)
}

// sweep forgets the addresses whose bucket is full again; the caller holds
// l.mu.
func (l *failureLimiter) sweep(now time.Time) {
	for addr, b := range l.buckets {
		if l.refill(b, now); b.tokens >= l.limit {
			delete(l.buckets, addr)
		}
	}
}

// host is the address a connection's failures are counted under: its IP,
// without the port.
func host(nc net.Conn) string {
	addr := nc.RemoteAddr().String()
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}
