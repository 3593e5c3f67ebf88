package guard

import (
	"testing"
	"time"
)

// TestPresenceBurstThenRate: a fresh budget lets burst events through at
// once, refuses the next, and refills at rate a second, never past burst.
func TestPresenceBurstThenRate(t *testing.T) {
	const burst, rate = 5, 2
	var p Presence
	now := time.Unix(1000, 0)
	for i := range burst {
		if !p.Take(now, rate, burst) {
			t.Fatalf("event %d of a fresh budget of %d refused", i+1, burst)
		}
	}
	if p.Take(now, rate, burst) || p.Dropped() != 1 {
		t.Fatalf("event %d at once: want refused and Dropped 1, got Dropped %d", burst+1, p.Dropped())
	}
	now = now.Add(time.Second) // 2 more
	got := 0
	for range burst {
		got += map[bool]int{true: 1}[p.Take(now, rate, burst)]
	}
	if got != rate {
		t.Fatalf("a second after the budget was spent: want %d events let through, got %d", rate, got)
	}
	now = now.Add(time.Hour) // refilled, but only to burst
	got = 0
	for range 2 * burst {
		got += map[bool]int{true: 1}[p.Take(now, rate, burst)]
	}
	if got != burst {
		t.Fatalf("an hour later: want %d events (the burst, no more), got %d", burst, got)
	}
}
