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
