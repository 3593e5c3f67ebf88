package main

import (
	"testing"
	"time"
)

// TestNextRungFits: the first rung is always climbed; the next only if the
// rungs so far and one more as long as their average fit in the budget.
func TestNextRungFits(t *testing.T) {
	for _, tc := range []struct {
		spent   time.Duration
		climbed int
		budget  time.Duration
		want    bool
	}{
		{0, 0, 0, true},
		{0, 0, time.Second, true},                       // the first rung, whatever the budget
		{time.Hour, 1, 0, true},                         // no budget
		{30 * time.Second, 1, 100 * time.Second, true},  // 30 + 30
		{50 * time.Second, 1, 100 * time.Second, true},  // 50 + 50: just fits
		{51 * time.Second, 1, 100 * time.Second, false}, // 51 + 51
		{90 * time.Second, 1, 100 * time.Second, false}, // chapter 08's first rung
		{60 * time.Second, 2, 100 * time.Second, true},  // 60 + 30
		{80 * time.Second, 2, 100 * time.Second, false}, // 80 + 40
	} {
		if got := nextRungFits(tc.spent, tc.climbed, tc.budget); got != tc.want {
			t.Errorf("nextRungFits(%v, %d, %v) = %v, want %v", tc.spent, tc.climbed, tc.budget, got, tc.want)
		}
	}
}
