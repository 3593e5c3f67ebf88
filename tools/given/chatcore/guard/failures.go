package guard

import (
	"sync"
	"time"
)

// Failures counts failed logins per client address: each address has a
// bucket of limit failures, refilled evenly over window. An address whose
// bucket is empty is refused at once, without a hash: guessing passwords
// costs the guesser time and the server nothing. (fail2ban's default is 5
// failures in 10 minutes, sshd closes a connection after 6; a chat server
// sees more honest typos, and behind a NAT many users share an address.)
//
// Allowed must be asked before anything else looks at the password — a
// cache of recent logins included: a check that answers "right" before the
// throttle lets a throttled guesser test passwords as fast as it can send
// them, against everyone in the cache.
type Failures struct {
	limit  float64
	window time.Duration

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

// maxAddresses bounds the map; past it, full buckets are swept.
const maxAddresses = 1 << 16

// NewFailures allows limit failures per window from one address.
func NewFailures(limit int, window time.Duration) *Failures {
	return &Failures{limit: float64(limit), window: window, buckets: make(map[string]*bucket)}
}

// refill brings b up to now; the caller holds l.mu.
func (l *Failures) refill(b *bucket, now time.Time) {
	b.tokens = min(l.limit, b.tokens+now.Sub(b.at).Seconds()*l.limit/l.window.Seconds())
	b.at = now
}

// Allowed reports whether addr may try a password now.
func (l *Failures) Allowed(addr string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[addr]
	if !ok {
		return true
	}
	l.refill(b, time.Now())
	return b.tokens >= 1
}

// Failed takes one failure from addr's bucket.
func (l *Failures) Failed(addr string) {
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
func (l *Failures) sweep(now time.Time) {
	for addr, b := range l.buckets {
		if l.refill(b, now); b.tokens >= l.limit {
			delete(l.buckets, addr)
		}
	}
}
