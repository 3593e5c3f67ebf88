package guard

import (
	"strings"
	"testing"
	"time"

	"serverlab/tools/given/chatcore/proto"
)

// TestChatBudget: a user's burst passes, the next byte does not, another
// user's budget is their own, and the rate refills it.
func TestChatBudget(t *testing.T) {
	b := NewChatBudget(1000, 100)
	now := time.Unix(1000, 0)
	for i := range 10 {
		if !b.Take(1, 100, now) {
			t.Fatalf("message %d of 100 bytes within a burst of 1000: refused", i+1)
		}
	}
	if b.Take(1, 1, now) {
		t.Fatal("a byte past the burst, at the same instant: passed")
	}
	if !b.Take(2, 1000, now) {
		t.Fatal("user 2's first 1000 bytes, with user 1's budget spent: refused")
	}
	if !b.Take(1, 100, now.Add(time.Second)) {
		t.Fatal("100 bytes a second later at 100 bytes a second: refused")
	}
	if b.Take(1, 100, now.Add(time.Second)) {
		t.Fatal("200 bytes a second later at 100 bytes a second: passed")
	}
	if !b.Take(3, 5000, now) || b.Take(3, 1, now) {
		t.Fatal("a message larger than the burst must pass with a full bucket and empty it")
	}
}

// TestChatBudgetSweeps: users whose buckets are full again are forgotten.
func TestChatBudgetSweeps(t *testing.T) {
	b := NewChatBudget(10, 10)
	now := time.Unix(1000, 0)
	for id := range uint32(5000) {
		b.Take(id, 10, now)
		now = now.Add(time.Millisecond)
	}
	if n := len(b.users); n > 2100 {
		t.Fatalf("5,000 users who each wrote once, 1 ms apart (a bucket is full again after 1 s): %d kept, want about the last second's", n)
	}
}

// TestChatFrame checks ChatFrame against the frame proto really writes,
// for content JSON escapes (up to 6 bytes a byte) and for none.
func TestChatFrame(t *testing.T) {
	for _, content := range []string{"", "plain", "<&>", "\x01\x1f\"\\\n\t", "\u2028é\xff", strings.Repeat("<", 1000)} {
		f, err := proto.Encode(proto.ReceiveChat{ChannelID: 1<<32 - 1, Content: content, UserID: 1<<32 - 1})
		if err != nil {
			t.Fatal(err)
		}
		if got := ChatFrame(content); got != len(f) {
			t.Errorf("ChatFrame(%q) = %d, want %d (the encoded 103)", content, got, len(f))
		}
	}
}
