package main

import "strings"

// maintainersMark is the mirror's mark (tools/maint/coursecheck: a given
// declaration the chapter keeps as its own). It means something only to the
// maintainers' mirror, which the release leaves out; a student reading it
// in a starter (24 of them, 22 in the open tracks) learns nothing from it.
const maintainersMark = "//mirror:keep"

// shippedGo is a chapter's Go file as the release ships it: without the
// lines that carry maintainersMark, nor the empty comment line that set the
// mark apart from the doc comment above it (gofmt would drop it once the
// mark is gone).
func shippedGo(b []byte) []byte {
	if !strings.Contains(string(b), maintainersMark) {
		return b
	}
	lines := strings.SplitAfter(string(b), "\n")
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), maintainersMark) {
			if n := len(out); n > 0 && strings.TrimSpace(out[n-1]) == "//" {
				out = out[:n-1]
			}
			continue
		}
		out = append(out, l)
	}
	return []byte(strings.Join(out, ""))
}
