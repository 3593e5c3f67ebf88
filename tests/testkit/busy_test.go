package testkit

import (
	"testing"
	"time"
)

// TestStarvedNeedsWork: a check blocked in a call is not "starved" however
// long its threads waited for a processor (figures seen at load 45); one
// that ran a little and waited most of the time is.
func TestStarvedNeedsWork(t *testing.T) {
	for _, c := range []struct {
		ran, waited time.Duration
		starved     bool
	}{
		{0, 700 * time.Millisecond, false},                    // blocked: the runtime's wake-ups waited
		{2 * time.Millisecond, 700 * time.Millisecond, false}, // idem, the monitor ran a little
		{50 * time.Millisecond, 800 * time.Millisecond, true}, // starved: it had work and got 5 %
		{500 * time.Millisecond, 100 * time.Millisecond, false},
	} {
		got := starvedFigures(c.ran, c.waited, time.Second) != ""
		if got != c.starved {
			t.Errorf("ran %v, waited %v in 1s: starved = %v, want %v", c.ran, c.waited, got, c.starved)
		}
	}
}
