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

func TestLimitRoundTrip(t *testing.T) {
	limit, ext, ok := ParseLimit(FormatLimit(160*time.Second, 2))
	if !ok || limit != 160*time.Second || ext != 2 {
		t.Fatalf("ParseLimit(FormatLimit(2m40s, 2)) = %v, %d, %v; want 2m40s, 2, true", limit, ext, ok)
	}
	for _, bad := range []string{"", "2m40s", "2m40s/", "x/2", "0s/2", "1s/-1", "-1s/1"} {
		if _, _, ok := ParseLimit(bad); ok {
			t.Errorf("ParseLimit(%q) accepted it; want it refused (no limit kept)", bad)
		}
	}
}

// TestLimitExtendsOnlyWhenStarved: a starved exercise gets its extensions,
// one at a time, and then none; one that was not starved gets none.
func TestLimitExtendsOnlyWhenStarved(t *testing.T) {
	l := keepLimit(time.Hour, 2, time.Now())
	defer l.timer.Stop()
	if l.extend(false) {
		t.Fatal("an exercise that was not starved got an extension")
	}
	for i := range 2 {
		if !l.extend(true) {
			t.Fatalf("a starved exercise was refused extension %d of 2", i+1)
		}
	}
	if l.extend(true) {
		t.Fatal("a starved exercise got a third extension; want at most the 2 the grader allowed")
	}
}
