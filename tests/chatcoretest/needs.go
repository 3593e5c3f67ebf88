package chatcoretest

import (
	"strconv"
	"strings"
)

// The note "(this check needs the earlier exercises … to work)" is said only
// where an earlier exercise is seen failing: before the server has answered
// the env's first request (the read loop of 7.1 is not there yet), or when
// a step of an earlier exercise (a registration, a login, a channel) failed
// on the way to the check. A check that failed on its own exercise's work —
// its stub answered "not implemented", say — gets no note: it would send the
// student to code that works (student2, F7).

// needsNote is the note for a failure on c: e.before until the server
// answered its first request, else nothing.
func (c *client) needsNote() string {
	if c.e == nil || c.e.answered != nil && c.e.answered.Load() {
		return ""
	}
	return c.e.before
}

// stepFailed is the end of a failure message in a step that belongs to
// exercise ex (a helper such as register or join): context, and, when the
// check grades a later exercise, the note that ex must work first.
func (c *client) stepFailed(ex, what string) string { return c.context() + c.stepNote(ex, what) }

func (c *client) stepNote(ex, what string) string {
	if !after(c.k.Exercise(), ex) {
		return ""
	}
	return "\n(this step is exercise " + ex + "'s, " + what + ": this check needs it to work first)"
}

// after reports whether exercise a comes after b in one chapter ("7.6"
// after "7.2").
func after(a, b string) bool {
	ca, na, ok1 := strings.Cut(a, ".")
	cb, nb, ok2 := strings.Cut(b, ".")
	x, err1 := strconv.Atoi(na)
	y, err2 := strconv.Atoi(nb)
	return ok1 && ok2 && ca == cb && err1 == nil && err2 == nil && x > y
}
