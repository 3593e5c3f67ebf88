package chatcoretest

import (
	"strings"
	"sync/atomic"
	"testing"

	"serverlab/tests/testkit"
)

// TestNeedsNote: the "needs the earlier exercises" note is said before the
// server answered its first request, and after that only for a failed step
// of an earlier exercise, never for the check's own.
func TestNeedsNote(t *testing.T) {
	for _, c := range []struct{ a, b string }{{"7.6", "7.2"}, {"7.10", "7.3"}} {
		if !after(c.a, c.b) || after(c.b, c.a) || after(c.a, c.a) {
			t.Errorf("after(%s, %s) must be true, and false the other way round and for itself", c.a, c.b)
		}
	}
	if after("8.6", "7.2") {
		t.Errorf("after(8.6, 7.2): another chapter's exercise is not an earlier one")
	}
	t.Run("TestEx7_6_Liveness", func(t *testing.T) {
		e := &env{before: "\n(this check needs the earlier exercises)", answered: new(atomic.Bool)}
		c := &client{k: testkit.New(t, "7.6"), e: e, who: "client"}
		if !strings.Contains(c.needsNote(), "needs the earlier exercises") {
			t.Errorf("before the first answer: no note in %q", c.needsNote())
		}
		e.answered.Store(true)
		if got := c.needsNote(); got != "" {
			t.Errorf("after the first answer, a failure of the check's own work: %q; want no note", got)
		}
		if got := c.stepNote("7.2", "users and sessions"); !strings.Contains(got, "exercise 7.2's") {
			t.Errorf("a failed login in 7.6: %q; want the note naming 7.2", got)
		}
		if got := c.stepNote("7.6", "liveness"); strings.Contains(got, "exercise 7.6's") {
			t.Errorf("a failed step of the check's own exercise: %q; want no note", got)
		}
	})
}
