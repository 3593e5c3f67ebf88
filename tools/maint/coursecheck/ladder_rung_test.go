package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestLadderRungFlag: -rung k (make ladder CH=NN RUNG=k) names one rung,
// so it refuses the seed's choices beside it, and a rung the chapter does
// not have is named with the ones it has, before anything is graded.
func TestLadderRungFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-ladder", "-ch", "01", "-rung", "2", "-rungs", "1"}, "-rung names one rung"},
		{[]string{"-ladder", "-ch", "01", "-rung", "-1"}, "must not be negative"},
		{[]string{"-ladder", "-ch", "01", "-rung", "99", "-root", fixtureRoot}, "has no rung k=99: its rungs are k = 0"},
	} {
		var out bytes.Buffer
		if code := run(context.Background(), tc.args, &out, &out); code != 2 {
			t.Errorf("coursecheck %s: exit %d, want 2:\n%s", strings.Join(tc.args, " "), code, out.String())
		}
		if !strings.Contains(out.String(), tc.want) {
			t.Errorf("coursecheck %s: output lacks %q:\n%s", strings.Join(tc.args, " "), tc.want, out.String())
		}
	}
}
