package proto

import (
	"unicode"
	"unicode/utf8"
)

// ValidName reports whether name may be a user or channel name: 1 to max
// bytes of UTF-8, each rune a letter, mark, digit, punctuation or symbol
// (Unicode categories L, M, N, P, S), as docs/chatcore.md ("Limits") says.
// That leaves out what hurts whoever displays or types a name: NUL and the
// other control characters (ESC starts a terminal's escape sequences), the
// format characters (the bidi overrides, the zero-width characters, U+FEFF)
// and every kind of space (the client splits its commands on spaces, so such
// a name could not be typed, and " " could not be told from "").
//
// It is the rule's one home for given code: chapter 08 calls it, and
// chapter 07's validName is the student's own writing of the same rule
// (exercise 7.2). Chapter 08 once kept a copy built on unicode.IsPrint,
// which counts U+0020 as printable and so let " " and "a b" be registered
// while chapter 07 refused them.
func ValidName(name string, max int) bool {
	if name == "" || len(name) > max || !utf8.ValidString(name) {
		return false
	}
	for _, r := range name {
		if !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S) {
			return false
		}
	}
	return true
}
