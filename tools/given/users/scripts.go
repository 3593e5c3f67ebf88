package users

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// Look-alikes across scripts. Cyrillic "а" (U+0430) and Latin "a" are drawn
// the same, so "аlice", with a Cyrillic first letter, reads as "alice" and is
// another name for every program. Unicode's security report (UTS #39 §5.2)
// answers with a restriction on the scripts a single identifier may mix; the
// course applies its "highly restrictive" level with the script tables of
// Go's own unicode package, kept up to date with every Unicode release:
//
//   - the letters of a name come from one script; characters common to
//     every script (digits, ASCII punctuation, combining marks) go with any;
//   - the exceptions are the ways Chinese, Japanese and Korean are written,
//     each of which may also use Latin: Han with Hiragana and Katakana, Han
//     with Bopomofo, Han with Hangul;
//   - the script is one of those recommended for identifiers in modern use
//     (UAX #31, table 5), so a rarely used script whose letters look Latin
//     (Cherokee "ᏚᎬᎡᏙᎬᎡ" reads as "SERVER") is refused too.
//
// What this does not catch is a whole name spelt in another recommended script
// with letters that look Latin (all-Cyrillic "аӏісе" for "alice"): that needs
// Unicode's table of confusable characters, which neither Go nor x/text
// carries.

// recommendedScripts are the scripts of UAX #31's table 5 (Recommended
// Scripts), by the names Go's unicode.Scripts gives them, the most common
// first (scriptOf tries them in this order).
var recommendedScripts = []string{
	"Latin", "Han", "Cyrillic", "Greek", "Arabic", "Hangul", "Hiragana", "Katakana", "Hebrew",
	"Devanagari", "Bengali", "Thai", "Armenian", "Georgian", "Tamil", "Telugu", "Kannada",
	"Malayalam", "Gujarati", "Gurmukhi", "Oriya", "Sinhala", "Khmer", "Lao", "Myanmar",
	"Tibetan", "Thaana", "Ethiopic", "Bopomofo",
}

// recommended holds the tables of recommendedScripts, in the same order.
var recommended = func() []*unicode.RangeTable {
	tables := make([]*unicode.RangeTable, len(recommendedScripts))
	for i, name := range recommendedScripts {
		tables[i] = unicode.Scripts[name]
	}
	return tables
}()

// cjkSets are the sets of scripts that may share a name, beside a name of one
// script (UTS #39, "highly restrictive").
var cjkSets = [][]string{
	{"Latin", "Han", "Hiragana", "Katakana"},
	{"Latin", "Han", "Bopomofo"},
	{"Latin", "Han", "Hangul"},
}

// checkScripts refuses a name whose letters mix scripts that a reader could
// take one for another, or come from a script outside the recommended ones.
// A name of ASCII characters has Latin letters only, and always passes.
func checkScripts(name string) error {
	var scripts []string
	for _, r := range name {
		s, ok := scriptOf(r)
		if !ok {
			return fmt.Errorf("%w: %w: name %q has %q, a letter of the %s script, which is not one "+
				"recommended for names (UAX #31)", ErrInvalid, ErrScript, name, r, s)
		}
		if s != "" && !slices.Contains(scripts, s) {
			scripts = append(scripts, s)
		}
	}
	if len(scripts) <= 1 {
		return nil
	}
	for _, set := range cjkSets {
		if !slices.ContainsFunc(scripts, func(s string) bool { return !slices.Contains(set, s) }) {
			return nil
		}
	}
	return fmt.Errorf("%w: %w: name %q mixes letters of the scripts %s (letters that look alike, such as "+
		"Latin a and Cyrillic а, would make it pass for another name)", ErrInvalid, ErrScript, name,
		strings.Join(scripts, " and "))
}

// scriptOf returns the script of r: "" for a character common to every
// script (Common, Inherited), false for one outside the recommended scripts
// (with its script's name, if it has one).
func scriptOf(r rune) (string, bool) {
	if r <= unicode.MaxASCII {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' {
			return "Latin", true
		}
		return "", true
	}
	if unicode.In(r, unicode.Common, unicode.Inherited) {
		return "", true
	}
	for i, t := range recommended {
		if unicode.Is(t, r) {
			return recommendedScripts[i], true
		}
	}
	for name, t := range unicode.Scripts {
		if unicode.Is(t, r) {
			return name, false
		}
	}
	return "an unknown", false
}
