package guard

import (
	"sync"
	"time"
	"unicode/utf8"

	"serverlab/tools/given/chatcore/proto"
)

// ChatBudget is every user's budget of chat bytes: a token bucket per user
// id of burst bytes, refilled at rate bytes a second. A message whose
// frame (TakeChat) finds its writer's bucket short is refused (Too many
// messages, try again later.) and stores nothing. Without it one user filled chapter
// 08's 64 MiB stream in 6–8 s, and then every message of everyone was
// refused (the default 1 GiB: 2.5–4 minutes); chapter 07's database grew
// without bound. With the defaults (1 MiB at once, 64 KiB a second) one
// user needs 17 minutes for 64 MiB and 4.5 hours for 1 GiB, while an
// honest paste of 63 messages of 16 KiB at once passes.
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

// TakeChat spends the bytes of content's chat message from user's budget
// (Take): ChatFrame(content), what the message costs on the wire and in
// the store, not len(content). Counting the content alone, '<' or a
// control character (6 bytes each as JSON) made one user's budget 6× the
// bytes stored and sent (attacker5's F1: 9.4 MB in the stream for 1.5 MB
// of budget), and an empty message cost nothing (F5: 140,685 stored in
// 10 s by four users).
func (b *ChatBudget) TakeChat(user uint32, content string, now time.Time) bool {
	return b.Take(user, ChatFrame(content), now)
}

// ChatFrame is the most bytes the frame of a chat message with this
// content takes (a 103 with the largest ids, length prefix included),
// counted exactly as proto encodes it, without encoding it.
func ChatFrame(content string) int { return chatFrameOverhead + JSONLen(content) }

// chatFrameOverhead is a 103's frame without its content's bytes.
var chatFrameOverhead = func() int {
	f, err := proto.Encode(proto.ReceiveChat{ChannelID: 1<<32 - 1, UserID: 1<<32 - 1})
	if err != nil {
		panic(err) // an empty 103 always encodes
	}
	return len(f)
}()

// JSONLen is the length of s as a JSON string's content, exactly as proto
// writes it (encoding/json without HTML escaping): '"' and '\\' take two
// bytes, \n \r \t two, other control characters, U+2028, U+2029 and each
// invalid byte six ("\u00XX", "\ufffd").
func JSONLen(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
				n += 2
			case c < 0x20:
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1, r == '\u2028', r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
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
