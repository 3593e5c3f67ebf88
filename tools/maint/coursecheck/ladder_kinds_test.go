package main

import (
	"strings"
	"testing"
)

// TestLadderSummarySaysWhichMismatch holds the ladder's last line to the
// kinds of mismatch that happened: a solved exercise that lost its points
// is not a starter that fails uncleanly, and the line must not say so.
func TestLadderSummarySaysWhichMismatch(t *testing.T) {
	cases := []struct {
		kinds     mismatchKinds
		want, not []string
	}{
		{mismatchKinds{solvedLost: 1}, []string{"1 solved exercise(s) lost"}, []string{"cleanly", "passed on"}},
		{mismatchKinds{unsolvedPassed: 2}, []string{"2 unsolved exercise(s) passed"}, []string{"cleanly", "lost"}},
		{mismatchKinds{unclean: 3}, []string{"3 unsolved exercise(s) failed", "cleanly"}, []string{"lost", "passed on"}},
		{mismatchKinds{solvedLost: 1, unclean: 1}, []string{"lost", "cleanly"}, []string{"passed on"}},
	}
	for _, c := range cases {
		got := c.kinds.String()
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%+v: the summary %q does not say %q", c.kinds, got, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(got, n) {
				t.Errorf("%+v: the summary %q says %q, which did not happen", c.kinds, got, n)
			}
		}
	}
}
