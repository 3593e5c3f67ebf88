package grade

import (
	"cmp"
	"fmt"
	"regexp"
	"strings"
	"time"

	"serverlab/tools/given/lab"
)

// Markers in test output that decide a cause. The serverlab ones are printed
// by tests/testkit and defined in tools/given/lab; the others come from the Go
// runtime, the testing package and goleak.
const (
	markTimeout     = "panic: test timed out after"
	markWatchdog    = lab.WatchdogMarker
	markPanic       = "panic: "
	markFatal       = "fatal error: "
	markRace        = "WARNING: DATA RACE"
	markRaceTesting = "race detected during execution of test"
	markLeak        = lab.LeakMarker
	markGoleak      = "found unexpected goroutines"
	markNoTests     = "testing: warning: no tests to run"
	markExit0       = "unexpected call to os.Exit(0) during test"
	markGone        = lab.SubjectGoneMarker
)

// markers are the texts that decide a verdict wherever they appear.
var markers = []string{markTimeout, markWatchdog, markPanic, markFatal, markRace, markRaceTesting, markLeak, markGoleak}

// hasMarker reports whether s holds any marker; the event reader keeps such
// output even past its size bound.
func hasMarker(s string) bool {
	for _, m := range markers {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// Run is everything the classifier learns about one exercise's run.
type Run struct {
	Test     string        // the top-level test that was run, e.g. TestEx1_1_ReadFrame
	Events   []Event       // what test2json reported, in order
	Timeout  time.Duration // the -test.timeout the binary was given
	Killed   bool          // the grader killed the process group: it outlived its timeout
	ExitCode int           // the test binary's exit status (-1: ended by a signal)
	Student  string        // the graded package's directory, slash-separated ("chapters/01"): whose frames to show
	// Subject is how the student's process ended, as the grader saw it (nil:
	// there was none, and a pass is not a pass).
	Subject *SubjectRun
	// CPU is the judge's processor time, Wall the run's: what a timeout's
	// message says of a busy machine.
	CPU, Wall time.Duration
}

// SubjectRun is how the subject of a judged run ended: what the grader saw
// of it, the process's exit, never what it printed (Output is shown to the
// student, to find the place, and decides nothing).
type SubjectRun struct {
	ExitCode int    // its exit status (-1: a signal)
	Signal   string // the signal that ended it, if one did
	Output   string // what it printed (its first 256 KiB)
	Limit    string // the sandbox's limit the kernel ended it for ("": none; sandbox_limits_linux.go)
	CPU      time.Duration
}

// Outcome is the verdict on one run: no cause means the exercise passed.
type Outcome struct {
	Cause   Cause
	Message string
	Elapsed time.Duration // the test's own running time, when it reported one
}

// Classify turns a run into a verdict. It is a pure function of the events,
// so every cause can be tested on recorded streams without running anything.
//
// Points are awarded only for an explicit pass of the test reported by the
// judge, with a zero exit status, with no timeout, panic, race or leak
// marker anywhere in the judge's output (the package-level output counts
// too: goleak.VerifyTestMain reports leaks after the test has passed, and the
// binary ran this one test alone), and a subject that did not end in a race,
// panic or exit of its own. The judge's output is the verdict because no code
// of the student's runs in the judge's process.
func Classify(r Run) Outcome {
	v := observe(r)
	out := Outcome{Elapsed: v.elapsed}
	if s := r.Subject; s != nil && !r.Killed {
		if cause, msg := subjectEnd(r, v, *s); cause != "" {
			out.Cause, out.Message = cause, msg
			return out
		}
	}
	switch {
	case r.Killed || v.has(markTimeout) || v.has(markWatchdog):
		out.Cause, out.Message = CauseTimeout, timeoutMessage(r, v)+cpuNote(r)
	case v.has(markExit0):
		out.Cause, out.Message = CauseExited, exitedMessage(r, v)
	case v.panicLine() >= 0:
		out.Cause, out.Message = CausePanic, panicMessage(v)
	case v.has(markRace) || v.has(markRaceTesting):
		out.Cause, out.Message = CauseRace, raceMessage(r, v)
	case v.has(markLeak) || v.has(markGoleak):
		out.Cause, out.Message = CauseLeak, leakMessage(r, v)
	case v.passed && r.ExitCode == 0 && r.Subject != nil:
		// Points.
	case v.passed && r.ExitCode == 0:
		out.Cause, out.Message = CauseNotRun, "the test passed, but no subject ran the student's code: the grader's fault, not the student's"
	case v.passed:
		out.Cause, out.Message = CauseExited, fmt.Sprintf("the test passed, but the test binary then exited with status %d", r.ExitCode)
	case v.skipped:
		out.Cause, out.Message = CauseNotRun, skippedMessage(r, v)
	case !v.ran:
		out.Cause, out.Message = CauseNotRun, notRunMessage(r, v)
	case !v.failed:
		out.Cause, out.Message = CauseExited, exitedMessage(r, v)
	default:
		out.Cause, out.Message = CauseFailed, failedMessage(r, v)
	}
	return out
}

// line is one line of output and the test it belongs to ("" for the package).
type line struct {
	test, text string
}

// view is what Classify extracts from the events once.
type view struct {
	lines                        []line
	ran, passed, failed, skipped bool
	elapsed                      time.Duration
}

func observe(r Run) view {
	var v view
	for _, ev := range r.Events {
		if ev.Test != "" && ev.Test != r.Test && !strings.HasPrefix(ev.Test, r.Test+"/") {
			continue // another test: cannot happen with -run '^Test$', ignored if it does
		}
		top := ev.Test == r.Test
		switch ev.Action {
		case "run":
			v.ran = v.ran || top
		case "pass", "fail", "skip":
			if !top {
				break
			}
			v.passed = v.passed || ev.Action == "pass"
			v.failed = v.failed || ev.Action == "fail"
			v.skipped = v.skipped || ev.Action == "skip"
			if ev.Elapsed > 0 {
				v.elapsed = time.Duration(ev.Elapsed * float64(time.Second))
			}
		case "output":
			for _, text := range strings.SplitAfter(ev.Output, "\n") {
				if text != "" {
					v.lines = append(v.lines, line{test: ev.Test, text: strings.TrimRight(text, "\r\n")})
				}
			}
		}
	}
	// Both verdicts for one test cannot happen; if they ever do, no points.
	v.passed = v.passed && !v.failed
	return v
}

// has reports whether any line contains marker.
func (v view) has(marker string) bool { return v.find(marker) >= 0 }

// find returns the index of the first line that contains marker, or -1.
func (v view) find(marker string) int {
	for i, l := range v.lines {
		if strings.Contains(l.text, marker) {
			return i
		}
	}
	return -1
}

// panicLine returns the index of the line where the runtime reports a crash:
// "panic: …" or "fatal error: …" at the start of a line (the runtime never
// indents them; test failure messages always are). -1 if there is none.
func (v view) panicLine() int {
	for i, l := range v.lines {
		if strings.HasPrefix(l.text, markFatal) ||
			(strings.HasPrefix(l.text, markPanic) && !strings.HasPrefix(l.text, markTimeout)) {
			return i
		}
	}
	return -1
}

// testLines are the test's own output (and its subtests'), without the
// framing the testing package adds around it.
func (v view) testLines(test string) []string {
	var out []string
	for _, l := range v.lines {
		if l.test == "" || isFraming(l.text, test) {
			continue
		}
		out = append(out, l.text)
	}
	return out
}

// from returns the message that starts at line i: the lines from i on that
// the same test printed (or the package, if it printed line i), without
// framing and without the binary's closing summary.
func (v view) from(i int, test string) []string {
	var out []string
	for _, l := range v.lines[i:] {
		if l.test != v.lines[i].test || isFraming(l.text, test) || isSummary(l.text) {
			continue
		}
		out = append(out, l.text)
	}
	return out
}

// isSummary reports the lines a test binary ends with: PASS, FAIL, ok …,
// exit status N.
func isSummary(text string) bool {
	switch {
	case text == "PASS", text == "FAIL",
		strings.HasPrefix(text, "FAIL\t"), strings.HasPrefix(text, "ok  \t"),
		strings.HasPrefix(text, "exit status "):
		return true
	}
	return false
}

// isFraming reports the lines that frame a test's output rather than say
// anything: === RUN / PAUSE / CONT / NAME, and the top-level --- verdict.
func isFraming(text, test string) bool {
	t := strings.TrimSpace(text)
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	for _, p := range []string{"--- PASS: ", "--- FAIL: ", "--- SKIP: "} {
		if strings.HasPrefix(text, p+test+" (") {
			return true
		}
	}
	return false
}

func texts(lines []line) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.text
	}
	return out
}

var goroutineHeader = regexp.MustCompile(`^goroutine \d+ \[[^\]]*\]:$`)

// raceExitCode is the status the race detector ends a subject with (its
// GORACE, set by the grader, says so).
const raceExitCode = 66

// subjectEnd states the cause when the subject of a judged run ended before
// its time: a race (the race detector ends it with raceExitCode), a panic, or
// an exit. The judge says whether it ended during the check (markGone); its
// exit status says how. What the subject printed only locates the place.
func subjectEnd(r Run, v view, s SubjectRun) (Cause, string) {
	if s.Limit != "" {
		return CauseExited, fmt.Sprintf("the student's code went over the sandbox's %s while %s was running, and "+
			"the kernel ended it (%s): honest work stays far below the limit; look for a buffer, file or "+
			"goroutine count that grows with no bound", s.Limit, r.Test, cmp.Or(s.Signal, fmt.Sprintf("exit status %d", s.ExitCode)))
	}
	race := s.ExitCode == raceExitCode && strings.Contains(s.Output, markRace)
	if !race && !v.has(markGone) {
		return "", ""
	}
	out := strings.Split(s.Output, "\n")
	switch {
	case race:
		msg := []string{"the race detector found a data race in the student's code while " + r.Test + " was running:"}
		if frames := studentFrames(out, r.Student, 8); len(frames) > 0 {
			msg = append(msg, frames...)
		}
		return CauseRace, excerpt(append(msg, tail(subjectRaceReport(out), 30)...))
	case s.Signal == "" && s.ExitCode == 2 && (strings.Contains(s.Output, markPanic) || strings.Contains(s.Output, markFatal)):
		msg := []string{"the student's code panicked while " + r.Test + " was running:"}
		return CausePanic, excerpt(append(msg, head(panicReport(out), 30)...))
	case s.Signal != "":
		return CauseExited, fmt.Sprintf("the process that runs the student's code was ended by %s while %s was running", s.Signal, r.Test)
	}
	msg := fmt.Sprintf("the student's code ended its process (exit status %d) while %s was running: "+
		"os.Exit or log.Fatal in the code under test", s.ExitCode, r.Test)
	if last := tail(out, 10); len(last) > 0 {
		msg += "; its last output:\n" + excerpt(last)
	}
	return CauseExited, msg
}
