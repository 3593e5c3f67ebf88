package proto

import (
	"strings"
	"testing"
)

// TestValidName holds the rule to the protocol text's list: what a name may
// hold and what it may not (docs/chatcore.md, "Limits").
func TestValidName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"alice", true},
		{"tester449", true},
		{"é-ü_ж#1", true},
		{strings.Repeat("a", 32), true},
		{strings.Repeat("a", 33), false},
		{"", false},
		{" ", false},
		{"a b", false},
		{" a", false},
		{"a ", false},
		{"a\tb", false},
		{"a\nb", false},
		{"a\x00b", false},
		{"a\x7fb", false},
		{"esc\x1b[2J", false},
		{"a\u00a0b", false}, // no-break space
		{"a\u3000b", false}, // ideographic space
		{"a\u2028b", false}, // line separator
		{"rtl\u202egnp", false},
		{"a\u2066b", false},
		{"zero\u200bw", false},
		{"\ufeffbom", false},
		{"bad\xffutf8", false},
	} {
		if got := ValidName(tc.name, 32); got != tc.ok {
			t.Errorf("ValidName(%q, 32) = %v, want %v", tc.name, got, tc.ok)
		}
	}
}
