package grade

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// hostile is what a student's error text can hold: a terminal sequence that
// clears the screen and draws a fake score, a carriage return and
// backspaces that overwrite the line, a right-to-left override, a byte that
// is not UTF-8.
const hostile = "boom\x1b[2J\x1b[H100/100\rall passed\b\b\u202eevil\xff"

// TestReportsAreInert: in every format, what the student's code wrote
// arrives as visible escapes, never as the control characters themselves
// (nor as a JSON or XML escape that a reader turns back into them).
func TestReportsAreInert(t *testing.T) {
	names := strings.Split(FormatNames(), "|")
	if !slices.Equal(names, []string{"classroom", "gradescope", "json", "junit", "text"}) {
		t.Fatalf("formats %v: give each new one a case here", names)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			rep := sampleReport()
			rep.Notes = append(rep.Notes, "note: "+hostile)
			rep.Chapters[0].Exercises[1].Message = "sent \"hi\", got " + hostile
			rep.Chapters[0].Integrity = []string{"screen: " + hostile}
			rep.Chapters[1].BuildError = hostile
			rep.Chapters[1].Exercises[0].Message = hostile
			rep.makeInert()
			write, err := LookupFormat(name)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := write(&out, rep); err != nil {
				t.Fatal(err)
			}
			got := out.String()
			for _, bad := range []string{"\x1b", "\r", "\b", "\u202e", "\xff", `\u001b`, `\u0008`, `\r`,
				"&#x1B;", "&#27;", "&#xD;", "&#13;", "&#x8;"} {
				if strings.Contains(got, bad) {
					t.Errorf("the %s report holds %q:\n%s", name, bad, got)
				}
			}
			if !strings.Contains(got, `x1b[2J`) || !strings.Contains(got, `x0d`) || !strings.Contains(got, `x08`) {
				t.Errorf("the %s report does not show the escapes as text (\\x1b[2J, \\x0d, \\x08):\n%s", name, got)
			}
		})
	}
}

func TestInertKeepsLayout(t *testing.T) {
	for in, want := range map[string]string{
		"line 1\n\tline 2":  "line 1\n\tline 2",
		"é ✓ 日本":            "é ✓ 日本",
		"a\x00b\x7fc\u0085": `a\x00b\x7fc\u0085`,
	} {
		if got := inert(in); got != want {
			t.Errorf("inert(%q) = %q, want %q", in, got, want)
		}
	}
}
