package main

import (
	"strings"
	"testing"
)

// TestPrimerShowsWhatTheLessonSays runs the primer and checks each claim the
// lesson makes from its output: a retry with the same id is not stored, a
// reset delivers copies that the mark drops, a whole Fetch(256) waits and a
// read that stops at the last sequence does not, and Create refuses a key
// that Put overwrites; an Update at the lease's revision refreshes it, one at
// a stale revision is refused, and a Create tells whose the key is.
func TestPrimerShowsWhatTheLessonSays(t *testing.T) {
	var out strings.Builder
	if err := run(&out); err != nil {
		t.Fatalf("run: %v\noutput so far:\n%s", err, out.String())
	}
	for _, want := range []string{
		`"hello"  id A-1 → stored at sequence 1, duplicate true`,
		"the stream holds 3 messages",
		"after a reset: sequence 3 \"again\"  at or below the mark 3: a copy",
		"after a reset: sequence 4 \"news\"   delivered; the mark is now 4",
		"to the end of the batch: 4 messages in 1",
		"up to the last sequence (4, looked up first): 4 messages in ",
		"Create(alice) from server B: jetstream.ErrKeyExists",
		`alice now belongs to "server B"`,
		"Update(s.1, 1) from server A: refreshed; the lease is now revision 2",
		"Update(s.1, 1) again: jetstream.ErrKeyRevisionMismatch",
		"Create(s.1) from server B: revision 4",
		"its Create: jetstream.ErrKeyExists: the key is another server's",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the primer's output lacks %q; got:\n%s", want, out.String())
		}
	}
}
