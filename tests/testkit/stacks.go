package testkit

import (
	"fmt"
	"regexp"
	"strings"
)

// Bounds on a goroutine report in a failure message: the course's own
// goroutines first, each with its frames outside the runtime, and only the
// first few of the rest. A server that leaks one goroutine per connection
// leaks hundreds of identical ones; the first few say where, the count says
// how many.
const (
	stackReportGoroutines = 6
	stackReportFrames     = 8
)

// goroutineHeader starts one goroutine's block in a runtime dump
// ("goroutine 7 [select]:") or in goleak's report ("[Goroutine 7 in state
// select, with … on top of the stack:").
var goroutineHeader = regexp.MustCompile(`^\s*\[?[Gg]oroutine \d+[ :\[]`)

// goroutineStack is one goroutine of a dump: its header line and its frames,
// each a function line and its file line.
type goroutineStack struct {
	header string
	frames [][2]string
}

// courseOwn says whether the goroutine runs the course's code that a student
// writes or reads: a frame in a chapter's or a solution's non-test files.
func (g goroutineStack) courseOwn() bool {
	for _, f := range g.frames {
		if isCourseFile(f[1]) {
			return true
		}
	}
	return false
}

func isCourseFile(file string) bool {
	return !strings.Contains(file, "_test.go:") &&
		(strings.Contains(file, "/chapters/") || strings.Contains(file, "/solutions/"))
}

// runtimeFrame is a frame of the Go runtime or the testing package: where
// every blocked goroutine ends, saying nothing of why.
func runtimeFrame(fn string) bool {
	for _, p := range []string{"runtime.", "internal/", "testing.", "sync.runtime_", "created by runtime", "created by testing"} {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}

// parseGoroutines splits a goroutine dump (the runtime's or goleak's) into
// goroutines.
func parseGoroutines(dump string) []goroutineStack {
	var gs []goroutineStack
	lines := strings.Split(dump, "\n")
	for i := 0; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], " ]")
		switch {
		case goroutineHeader.MatchString(l):
			if len(gs) > 0 && len(gs[len(gs)-1].frames) == 0 && strings.HasPrefix(strings.TrimSpace(l), "goroutine ") {
				continue // goleak's header, then the runtime's for the same goroutine
			}
			gs = append(gs, goroutineStack{header: strings.TrimLeft(strings.TrimSpace(l), "[")})
		case len(gs) > 0 && l != "" && !strings.HasPrefix(l, "\t"):
			file := ""
			if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "\t") {
				file = strings.TrimSpace(lines[i+1])
				if at := strings.LastIndex(file, " +0x"); at > 0 {
					file = file[:at]
				}
				i++
			}
			g := &gs[len(gs)-1]
			g.frames = append(g.frames, [2]string{l, file})
		}
	}
	return gs
}

// boundedStacks rewrites a goroutine dump for a failure message: the
// course's goroutines first, then the others, at most
// stackReportGoroutines in all, each with at most stackReportFrames frames
// outside the runtime, and a last line counting what it left out.
func boundedStacks(dump string) string {
	gs := parseGoroutines(dump)
	if len(gs) == 0 {
		return strings.TrimSpace(dump)
	}
	var own, other []goroutineStack
	for _, g := range gs {
		if g.courseOwn() {
			own = append(own, g)
		} else {
			other = append(other, g)
		}
	}
	var b strings.Builder
	shown := 0
	for _, g := range append(own, other...) {
		if shown == stackReportGoroutines {
			break
		}
		writeGoroutine(&b, g)
		shown++
	}
	if left := len(gs) - shown; left > 0 {
		ownLeft := max(len(own)-shown, 0)
		fmt.Fprintf(&b, "… and %d more goroutines (%d of them in the course's code), not shown\n", left, ownLeft)
	}
	return strings.TrimRight(b.String(), "\n")
}

func writeGoroutine(b *strings.Builder, g goroutineStack) {
	b.WriteString(g.header + "\n")
	n, cut := 0, 0
	for _, f := range g.frames {
		if runtimeFrame(f[0]) {
			cut++
			continue
		}
		if n == stackReportFrames {
			cut++
			continue
		}
		n++
		b.WriteString("    " + f[0] + "\n")
		if f[1] != "" {
			b.WriteString("        " + f[1] + "\n")
		}
	}
	if cut > 0 && n == 0 {
		fmt.Fprintf(b, "    (%d frames of the runtime)\n", cut)
	}
}

// stillRunning says, for a Close that did not return, what of the server is
// still running: each goroutine in the course's code, at the deepest of its
// frames there (where it waits) and in what state, at most four. A Close
// that waits for a goroutine is right to wait: the goroutine that does not
// end is the fault (a reference never released, a channel nobody closes, a
// Done never called), and the message must send the student there, not to
// Close. "" when no goroutine is in the course's code.
func stillRunning() string { return stillRunningIn(allStacks()) }

// stillRunningIn is stillRunning of the goroutine dump given.
func stillRunningIn(dump string) string {
	var waiting, others []string
	for _, g := range parseGoroutines(dump) {
		fn, file, ok := g.courseTop()
		if !ok {
			continue
		}
		state := g.header
		if _, s, found := strings.Cut(state, "["); found {
			state, _, _ = strings.Cut(s, "]")
		}
		line := fmt.Sprintf("  %s (%s) [%s]", fn, file, state)
		if strings.Contains(fn, ".Close") {
			waiting = append(waiting, line)
		} else {
			others = append(others, line)
		}
	}
	if len(others) == 0 {
		if len(waiting) > 0 && strings.Contains(waiting[0], "WaitGroup.Wait") {
			return "Close is waiting:\n" + waiting[0] + "\nbut no goroutine of the server is running: the count it " +
				"waits for was never brought back to zero. Likely cause: a WaitGroup Add without its Done (a goroutine " +
				"that returns, or an error path, without calling Done; defer wg.Done() first thing in the goroutine)."
		}
		return ""
	}
	var b strings.Builder
	if len(waiting) > 0 {
		b.WriteString("Close is waiting:\n" + strings.Join(waiting[:min(len(waiting), 2)], "\n") + "\n")
	}
	b.WriteString("for these goroutines of the server, which have not ended:\n")
	b.WriteString(strings.Join(others[:min(len(others), 4)], "\n") + "\n")
	if len(others) > 4 {
		fmt.Fprintf(&b, "  … and %d more\n", len(others)-4)
	}
	b.WriteString("Likely cause: one of these waits for something that never comes once the server is closing: " +
		"a reference to a connection never released (its reader or writer never ends), a channel nobody " +
		"closes, a WaitGroup Done never called. Close waiting for them is right; find why they do not end.")
	return b.String()
}

// courseTop is the goroutine's first frame (the innermost) in a chapter's or
// a solution's non-test files: its function and file:line.
func (g goroutineStack) courseTop() (fn, file string, ok bool) {
	for _, f := range g.frames {
		if isCourseFile(f[1]) {
			fn = f[0]
			if i := strings.LastIndexByte(fn, '('); i > 0 && strings.HasSuffix(fn, ")") {
				fn = fn[:i]
			}
			file = f[1]
			if i := strings.LastIndex(file, "/chapters/"); i >= 0 {
				file = file[i+1:]
			} else if i := strings.LastIndex(file, "/solutions/"); i >= 0 {
				file = file[i+1:]
			}
			return fn, file, true
		}
	}
	return "", "", false
}
