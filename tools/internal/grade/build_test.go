package grade

import (
	"slices"
	"testing"
	"time"
)

// TestBuildFlagsPassOnlyTrimpath: the grader's builds take -trimpath from
// the caller (make test's shared cache) and no other flag of the caller's,
// such as a -overlay or -tags that would change what is built.
func TestBuildFlagsPassOnlyTrimpath(t *testing.T) {
	for _, tc := range []struct{ callers, want string }{
		{"", "-mod=mod"},
		{"-trimpath", "-mod=mod -trimpath"},
		{"-tags=judge -overlay=/tmp/x.json -trimpath -mod=vendor", "-mod=mod -trimpath"},
		{"-tags=judge -mod=vendor", "-mod=mod"},
		{"-trimpath=false", "-mod=mod"},
	} {
		if got := buildFlags(tc.callers); got != tc.want {
			t.Errorf("GOFLAGS=%q: the grader builds with %q, want %q", tc.callers, got, tc.want)
		}
	}
}

// TestRescaleFollowsTheLoadAtStart: an exercise's waits and time limit come
// from the load as it starts (never below the quiet limit), doubled when it
// runs again alone.
func TestRescaleFollowsTheLoadAtStart(t *testing.T) {
	j := job{limit: 40 * time.Second, again: 1}
	for _, tc := range []struct {
		measured, again float64
		scale           float64
		timeout         time.Duration
	}{
		{0.5, 1, 1, 40 * time.Second},
		{3, 1, 3, 120 * time.Second},
		{1, 2, 2, 80 * time.Second},
		{2.5, 2, 5, 200 * time.Second},
	} {
		j.again = tc.again
		j.rescale(tc.measured)
		if j.scale != tc.scale || j.timeout != tc.timeout {
			t.Errorf("measured scale %v, again %v: the job waits %v times as long with a limit of %v; want %v and %v",
				tc.measured, tc.again, j.scale, j.timeout, tc.scale, tc.timeout)
		}
	}
}

// TestLongestFirst: the longest time limit starts first; equal ones keep
// the rubric's order.
func TestLongestFirst(t *testing.T) {
	s := time.Second
	got := longestFirst([]time.Duration{40 * s, 90 * s, 40 * s, 120 * s, 40 * s})
	if want := []int{3, 1, 0, 2, 4}; !slices.Equal(got, want) {
		t.Errorf("longestFirst = %v, want %v", got, want)
	}
}
