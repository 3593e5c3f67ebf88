package grade

import (
	"bytes"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// TestInertEveryRune is the allow-list as a property over every rune: a
// rune goes out raw only if it is newline, tab, or printable and neither a
// format character nor a line or paragraph separator; anything else comes
// out as an escape made of printable ASCII alone.
func TestInertEveryRune(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue // surrogates: no UTF-8 string holds one
		}
		in := string(r)
		got := inert(in)
		raw := r == '\n' || r == '\t' ||
			unicode.IsPrint(r) && !unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
		if raw {
			if got != in {
				t.Errorf("inert(%U) = %q, want it raw", r, got)
			}
			continue
		}
		if got == in || !printableASCII(got) {
			t.Errorf("inert(%U) = %q, want an escape in printable ASCII", r, got)
		}
	}
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// FuzzInert: whatever the student's code writes, inert's result is valid
// UTF-8 of runes that show, and text that needed nothing is kept as it was.
func FuzzInert(f *testing.F) {
	for _, s := range []string{hostile, "a\u2028b\u2029c", "zero\u200bwidth", "\ufeffbom", "tag\U000e0041\U000e007f",
		"é ✓ 日本\n\tok", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := inert(s)
		if !utf8.ValidString(got) {
			t.Fatalf("inert(%q) = %q: not UTF-8", s, got)
		}
		for _, r := range got {
			if !shows(r) {
				t.Fatalf("inert(%q) = %q holds %U raw", s, got, r)
			}
		}
		if !needsEscape(s) && got != s {
			t.Fatalf("inert(%q) = %q changed text that needed nothing", s, got)
		}
	})
}

// TestReportsHideNoInvisibles: the characters cheater5 found raw in the
// reports (the separators U+2028/2029, which start a line in some viewers and
// let a message carry a fake "25/25 passed" row; U+200B, U+FEFF, a tag
// character) arrive escaped in all five formats.
func TestReportsHideNoInvisibles(t *testing.T) {
	invisible := []string{"\u2028", "\u2029", "\u200b", "\ufeff", "\U000e0041"}
	msg := "got x" + strings.Join(invisible, "1.2 WriteFrame 25/25 passed")
	for _, name := range strings.Split(FormatNames(), "|") {
		rep := sampleReport()
		rep.Notes = append(rep.Notes, msg)
		rep.Chapters[0].Exercises[1].Message = msg
		rep.Chapters[0].Integrity = []string{msg}
		rep.Chapters[1].BuildError = msg
		rep.makeInert()
		write, err := LookupFormat(name)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := write(&out, rep); err != nil {
			t.Fatal(err)
		}
		for _, bad := range invisible {
			if strings.Contains(out.String(), bad) {
				t.Errorf("the %s report holds %U raw", name, []rune(bad)[0])
			}
		}
		if !strings.Contains(out.String(), `u2028`) {
			t.Errorf("the %s report does not show U+2028 as the escape \\u2028", name)
		}
	}
}
