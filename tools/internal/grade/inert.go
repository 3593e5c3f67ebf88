package grade

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Everything a report quotes of the student's code or build (test output,
// panics, compiler errors, screening hits) is text the student chose: an
// error whose text is terminal control sequences could redraw an
// instructor's screen (a fake 100/100 table over the real one) or hide lines
// from a GitHub Classroom log. makeInert escapes it once, where the report
// is finished (Grade), so that every format writes it as visible text.

// makeInert escapes every string of the report that may hold text of the
// student's.
func (r *Report) makeInert() {
	escapeAll(r.Notes)
	for i := range r.Chapters {
		ch := &r.Chapters[i]
		ch.BuildError = inert(ch.BuildError)
		escapeAll(ch.Integrity)
		for j := range ch.Exercises {
			ch.Exercises[j].Message = inert(ch.Exercises[j].Message)
		}
	}
}

func escapeAll(ss []string) {
	for i, s := range ss {
		ss[i] = inert(s)
	}
}

// inert returns s with every character that acts on a display instead of
// showing escaped as visible text (\x1b, \r, \u202e): the C0 and C1 controls
// but newline and tab, DEL, the bidirectional-text controls, and bytes that
// are not UTF-8.
func inert(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case acts(r):
			if r < 0x80 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsEscape(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	return strings.ContainsFunc(s, acts)
}

// acts reports whether r does something to a terminal or to the text around
// it rather than show as a character.
func acts(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return false
}
