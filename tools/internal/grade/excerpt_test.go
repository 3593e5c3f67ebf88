package grade

import (
	"fmt"
	"strings"
	"testing"

	"serverlab/tests/testkit"
)

func TestExcerptBoundsAndTidiesMessages(t *testing.T) {
	var lines []string
	lines = append(lines, "", "    first.go:1: first")
	for i := range 40 {
		lines = append(lines, fmt.Sprintf("        detail %d", i))
	}
	got := excerpt(lines)
	gotLines := strings.Split(got, "\n")
	if len(gotLines) != maxMessageLines+1 {
		t.Errorf("excerpt of 41 lines has %d lines, want %d and a note", len(gotLines), maxMessageLines)
	}
	if gotLines[0] != "first.go:1: first" || gotLines[1] != "    detail 0" {
		t.Errorf("excerpt did not drop the leading blank line and the common indentation:\n%s", got)
	}
	if last := gotLines[len(gotLines)-1]; last != "… (16 more lines)" {
		t.Errorf("excerpt's last line = %q, want the count of lines left out", last)
	}

	long := excerpt([]string{strings.Repeat("é", 2000)})
	if len(long) > maxLineBytes+len("…") || !strings.HasSuffix(long, "…") {
		t.Errorf("a 4000-byte line became %d bytes; want it cut to %d, on a rune boundary, marked …", len(long), maxLineBytes)
	}

	var many []string
	for range 20 {
		many = append(many, strings.Repeat("x", 400))
	}
	if got := excerpt(many); len(got) > maxMessageBytes+40 {
		t.Errorf("excerpt of 8000 bytes is %d bytes, want at most about %d", len(got), maxMessageBytes)
	}

	if got := excerpt([]string{"fn()", "\tfile.go:3 +0x1", "  \tnested.go:4"}); got != "fn()\n    file.go:3 +0x1\n      nested.go:4" {
		t.Errorf("tabs in the indentation were not expanded: %q", got)
	}
}

// A failed check's message leads its excerpt, however many subtests passed
// before it; their verdicts are not shown.
func TestFailureFirst(t *testing.T) {
	ev := func(test, out string) Event { return Event{Action: "output", Test: test, Output: out} }
	r := Run{Test: "TestEx8_2_X", Events: []Event{
		ev("TestEx8_2_X", "=== RUN   TestEx8_2_X\n"),
		ev("TestEx8_2_X/a", "=== RUN   TestEx8_2_X/a\n"),
		ev("TestEx8_2_X/a", "    --- PASS: TestEx8_2_X/a (0.01s)\n"),
		ev("TestEx8_2_X/b", "    --- PASS: TestEx8_2_X/b (0.01s)\n"),
		ev("TestEx8_2_X/c", "        x_test.go:9: sent \"hi\", want \"ok\", got \"\"\n"),
		ev("TestEx8_2_X/c", "        hint: flush\n"),
		ev("TestEx8_2_X/c", "    --- FAIL: TestEx8_2_X/c (0.01s)\n"),
		ev("TestEx8_2_X", "    x_test.go:20: random inputs from seed 7\n"),
		ev("TestEx8_2_X", "--- FAIL: TestEx8_2_X (0.03s)\n"),
	}}
	got := excerpt(failureFirst(observe(r), r.Test))
	want := "    x_test.go:9: sent \"hi\", want \"ok\", got \"\"\n    hint: flush\n--- FAIL: TestEx8_2_X/c (0.01s)\nx_test.go:20: random inputs from seed 7"
	if got != want {
		t.Errorf("excerpt =\n%s\nwant\n%s", got, want)
	}
}

// A timeout the watchdog found blocked is charged at once; one it found
// starved of CPU, or one without its report, is run again alone.
func TestBlockedIsNotRunAgain(t *testing.T) {
	cases := map[string]bool{
		markWatchdog + " exercise 2.6 did not finish within 30s: " + testkit.WatchdogBlocked + " (…)":         true,
		markWatchdog + " exercise 2.6 did not finish within 30s: ran out of time: the check got 0.1 s of CPU": false,
		"panic: test timed out after 40s": false,
	}
	for msg, want := range cases {
		if got := blocked(msg); got != want {
			t.Errorf("blocked(%q) = %v, want %v", msg, got, want)
		}
	}
}
