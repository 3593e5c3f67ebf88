package grade

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Bounds on a message: enough to see what went wrong, short enough to read in
// a results table or a Gradescope box. The full output is one go test away.
const (
	maxMessageLines = 25
	maxMessageBytes = 3 << 10
	maxLineBytes    = 512
)

// excerpt joins output lines into a message: leading tabs expanded, common
// indentation removed, blank lines at either end dropped, and cut to maxMessageLines lines and
// maxMessageBytes bytes, saying how much was left out.
func excerpt(lines []string) string {
	lines = trimBlank(dedent(expandTabs(lines)))
	var b strings.Builder
	for i, l := range lines {
		l = cutLine(l)
		if i == maxMessageLines || b.Len()+len(l)+1 > maxMessageBytes {
			b.WriteString(moreLines(len(lines) - i))
			break
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}

// moreLines says how many lines a message left out.
func moreLines(n int) string {
	if n == 1 {
		return "… (1 more line)"
	}
	return fmt.Sprintf("… (%d more lines)", n)
}

// expandTabs turns the leading tabs of stack traces' file lines into spaces,
// so that indentation survives any report format.
func expandTabs(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		rest := strings.TrimLeft(l, " \t")
		out[i] = strings.ReplaceAll(l[:len(l)-len(rest)], "\t", "    ") + rest
	}
	return out
}

// cutLine shortens a line longer than maxLineBytes, on a rune boundary.
func cutLine(l string) string {
	if len(l) <= maxLineBytes {
		return l
	}
	cut := maxLineBytes
	for cut > 0 && !utf8.RuneStart(l[cut]) {
		cut--
	}
	return l[:cut] + "…"
}

// dedent removes the leading spaces every non-blank line shares (the testing
// package indents a test's messages by four per level).
func dedent(lines []string) []string {
	common := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " "))
		if common < 0 || n < common {
			common = n
		}
	}
	if common <= 0 {
		return lines
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if len(l) >= common {
			out[i] = l[common:]
		}
	}
	return out
}

func trimBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// tail returns the last n lines.
func tail(lines []string, n int) []string {
	if len(lines) > n {
		return lines[len(lines)-n:]
	}
	return lines
}

// failureFirst is a failed test's own output ordered for reading: the lines
// of its first failed subtest (the deepest: a subtest's verdict comes before
// its parent's), which carry the sent / want / got and the hint, then the
// rest. Verdicts of subtests that passed or skipped are dropped (a row of
// "--- PASS" lines says nothing about the failure), and so is the framing;
// a failed subtest's verdict stays, after its message: it names the case.
func failureFirst(v view, test string) []string {
	first := ""
	for _, l := range v.lines {
		if name, ok := strings.CutPrefix(strings.TrimSpace(l.text), "--- FAIL: "); ok {
			if name, _, _ = strings.Cut(name, " ("); name != test {
				first = name
				break
			}
		}
	}
	var lead, rest []string
	for _, l := range v.lines {
		if l.test == "" || isFraming(l.text, test) || isPassVerdict(l.text) {
			continue
		}
		if first != "" && l.test == first {
			lead = append(lead, l.text)
		} else {
			rest = append(rest, l.text)
		}
	}
	return append(lead, rest...)
}

// isPassVerdict reports the verdict line of a test or subtest, at any
// depth, that passed or skipped.
func isPassVerdict(text string) bool {
	t := strings.TrimSpace(text)
	return strings.HasPrefix(t, "--- PASS: ") || strings.HasPrefix(t, "--- SKIP: ")
}
