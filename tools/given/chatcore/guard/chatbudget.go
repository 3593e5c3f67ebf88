package guard

import (
	"sync"
	"time"
)

// ChatBudget is every user's budget of chat bytes: a token bucket per user
// id of burst bytes, refilled at rate bytes a second. A message whose
// content finds its writer's bucket short is refused (Too many messages,
// try again later.) and stores nothing. Without it one user filled chapter
// 08's 64 MiB stream in 6–8 s, and then every message of everyone was
// refused (the default 1 GiB: 2.5–4 minutes); chapter 07's database grew
// without bound. With the defaults (1 MiB at once, 64 KiB a second) one
// user needs 17 minutes for 64 MiB and 4.5 hours for 1 GiB, while an
// honest paste of 64 long messages at once passes.
//
// It counts by user id, not by connection, so that logging out and in
// again does not refill it; each server keeps its own (chapter 08: a user
// is logged in on one server at a time). It is safe for concurrent use.
type ChatBudget struct {
	burst, rate float64

	mu    sync.Mutex
	users map[uint32]*chatTokens
	swept int // len(users) after the last sweep
}

type chatTokens struct {
	n  float64
	at time.Time
}

// NewChatBudget makes the budget: burst bytes at once, rate a second.
func NewChatBudget(burst, rate int) *ChatBudget {
	return &ChatBudget{burst: float64(burst), rate: float64(rate), users: make(map[uint32]*chatTokens)}
}

// Take spends n bytes of user's budget at now, if they are there, and
// reports whether the message may be stored. A message larger than burst
// passes only with a full bucket, and empties it.
func (b *ChatBudget) Take(user uint32, n int, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.users[user]
	if t == nil {
		b.sweepLocked(now)
		t = &chatTokens{n: b.burst, at: now}
		b.users[user] = t
	}
	t.n = min(b.burst, t.n+now.Sub(t.at).Seconds()*b.rate)
	t.at = now
	need := min(float64(n), b.burst)
	if t.n < need {
		return false
	}
	t.n -= need
	return true
}

// Reset forgets every user's budget: the ids were handed out by a store
// that is gone, and the next store hands them to new users, who must not
// inherit an old user's spending (chapter 08's server, when NATS lost its
// store).
func (b *ChatBudget) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	clear(b.users)
	b.swept = 0
}

// sweepLocked forgets the users whose buckets are full again (they would
// start full anyway) once the map has doubled since the last sweep, so
// that it holds about the users who wrote lately, not all who ever did.
func (b *ChatBudget) sweepLocked(now time.Time) {
	if len(b.users) < max(1024, 2*b.swept) {
		return
	}
	for id, t := range b.users {
		if t.n+now.Sub(t.at).Seconds()*b.rate >= b.burst {
			delete(b.users, id)
		}
	}
	b.swept = len(b.users)
}
