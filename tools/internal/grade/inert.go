package grade

import (
	"fmt"
	"strings"
	"unicode"
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

// inert returns s with every character that is not plainly printed
// escaped as visible text (\x1b, \x0d, \u202e, \U000e0041). What goes out
// raw is an allow-list, not a list of the characters known to act: newline,
// tab, and the runes unicode.IsPrint accepts (letters, marks, numbers,
// punctuation, symbols, the ASCII space). Everything else is escaped: the C0
// and C1 controls, DEL, the format characters (Cf: bidirectional controls,
// U+200B, U+FEFF, the tag characters U+E0000–E007F), the line and paragraph
// separators U+2028/2029 that some viewers break a line at, the other
// spaces, private-use and unassigned runes, and bytes that are not UTF-8. A
// list of the acting ones missed U+2028 and the tags (cheater5's G); an
// allow-list has nothing to forget.
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
		case !shows(r):
			switch {
			case r < 0x80:
				fmt.Fprintf(&b, `\x%02x`, r)
			case r <= 0xffff:
				fmt.Fprintf(&b, `\u%04x`, r)
			default:
				fmt.Fprintf(&b, `\U%08x`, r)
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
	return strings.ContainsFunc(s, func(r rune) bool { return !shows(r) })
}

// shows reports whether r may go out raw: newline and tab (the report's
// layout), and what unicode.IsPrint accepts. IsPrint already leaves out the
// format characters (Cf) and the separators but the ASCII space (Zs, Zl,
// Zp); the explicit test says so for a reader, and holds if IsPrint ever
// widens.
func shows(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return true
	case unicode.Is(unicode.Cf, r), unicode.Is(unicode.Zl, r), unicode.Is(unicode.Zp, r):
		return false
	}
	return unicode.IsPrint(r)
}
