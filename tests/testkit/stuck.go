package testkit

import "strings"

// stuckGoroutines lists, for the watchdog's message, where the student's
// code is blocked: the goroutines with frames in a chapter's (or a
// solution's) non-test files, those frames only, at most two goroutines of
// three frames. The suite's and the runtime's frames say nothing to a
// student. It returns "" when no goroutine is in their code.
func stuckGoroutines() string {
	buf := []byte(allStacks())
	var b strings.Builder
	shown := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		lines := strings.Split(g, "\n")
		var frames []string
		for i := 2; i < len(lines) && len(frames) < 6; i++ {
			file := strings.TrimSpace(lines[i])
			if !strings.HasPrefix(lines[i], "\t") || strings.Contains(file, "_test.go:") ||
				!strings.Contains(file, "/chapters/") && !strings.Contains(file, "/solutions/") {
				continue
			}
			if at := strings.LastIndex(file, " +0x"); at > 0 {
				file = file[:at]
			}
			frames = append(frames, "    "+lines[i-1], "        "+file)
		}
		if len(frames) == 0 {
			continue
		}
		if shown == 0 {
			b.WriteString("Where your code is blocked:\n")
		}
		b.WriteString("  " + lines[0] + "\n" + strings.Join(frames, "\n") + "\n")
		if shown++; shown == 2 {
			break
		}
	}
	return b.String()
}
