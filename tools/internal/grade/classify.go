package grade

import (
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

// hasMarker reports whether s holds any marker; the event reader keeps such
// output even past its size bound.
func hasMarker(s string) bool {
	for _, m := range []string{markTimeout, markWatchdog, markPanic, markFatal, markRace, markRaceTesting, markLeak, markGoleak} {
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
	Recorded bool          // the harness wrote a valid completion record for Test
	Channel  string        // how the harness got its secret: channelFD, or channelEnv (not tamper-proof)
	Student  string        // the graded package's directory, slash-separated ("chapters/01"): whose frames to show
	// Subject is how the student's process of a judged run ended (nil: the
	// test binary ran alone, and Recorded is what makes its pass count).
	Subject *SubjectRun
	// CPU is the judge's (or the lone test binary's) processor time, Wall
	// the run's: what a timeout's message says of a busy machine.
	CPU, Wall time.Duration
}

// SubjectRun is how the subject of a judged run ended: what the grader saw
// of it, the process's exit, never what it printed (Output is shown to the
// student, to find the place, and decides nothing).
type SubjectRun struct {
	ExitCode int    // its exit status (-1: a signal)
	Signal   string // the signal that ended it, if one did
	Output   string // what it printed (its first 256 KiB)
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
// Points are awarded only for an explicit pass of the test, confirmed by the
// harness's completion record and a zero exit status, with no timeout,
// panic, race or leak marker anywhere in the run's output: the package-level
// output counts too, because goleak.VerifyTestMain reports leaks after the
// test has passed, and the binary ran this one test alone. The record is what
// makes a pass trustworthy: output and exit status are the student's to forge.
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
	case v.passed && r.ExitCode == 0 && (r.Recorded || r.Subject != nil):
		// Points.
	case v.passed && r.ExitCode == 0:
		out.Cause, out.Message = CauseIntegrity, "the test reported a pass, but the course's harness (tests/testkit) "+
			"did not confirm it with this run's completion record: output and exit status alone earn nothing"
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

func failedMessage(r Run, v view) string {
	if own := v.testLines(r.Test); len(own) > 0 {
		return excerpt(own)
	}
	return "the test failed without a message; the test binary said:\n" + excerpt(tail(texts(v.lines), 10))
}

// exitedMessage says that the process ended in the middle of the test, and
// shows where, when the runtime said: os.Exit(0) panics under
// -test.paniconexit0 with the caller's frames.
func exitedMessage(r Run, v view) string {
	if i := v.find(markExit0); i >= 0 {
		msg := []string{"the code called os.Exit(0) while " + r.Test + " was running: exiting is not passing"}
		if frames := studentFrames(texts(v.lines[i:]), r.Student, 6); len(frames) > 0 {
			msg = append(msg, "where (your code):")
			msg = append(msg, frames...)
		}
		return excerpt(msg)
	}
	msg := fmt.Sprintf("the test binary exited with status %d while %s was running, before the test finished: "+
		"os.Exit, log.Fatal or a crash of the whole process in the code under test", r.ExitCode, r.Test)
	if last := tail(v.testLines(r.Test), 10); len(last) > 0 {
		msg += "; its last output:\n" + excerpt(last)
	}
	return msg
}

// studentFrames returns, from a goroutine dump, the frames (function line
// and file line) whose file is one of the student's in the package
// directory dir (not the course's *_test.go wiring), at most max of them, in
// the order they appear.
func studentFrames(dump []string, dir string, max int) []string {
	if dir == "" {
		return nil
	}
	var out []string
	for k := 1; k < len(dump) && len(out) < 2*max; k++ {
		if strings.HasPrefix(dump[k], "\t") && strings.Contains(dump[k], "/"+dir+"/") && !strings.Contains(dump[k], "_test.go:") &&
			!strings.HasPrefix(dump[k-1], "\t") {
			out = append(out, dump[k-1], dump[k])
		}
	}
	return out
}

func skippedMessage(r Run, v view) string {
	if own := v.testLines(r.Test); len(own) > 0 {
		return "the test skipped itself:\n" + excerpt(own)
	}
	return "the test skipped itself"
}

func notRunMessage(r Run, v view) string {
	if v.has(markNoTests) {
		return fmt.Sprintf("%s is not in the chapter's test binary: the rubric and the test wiring disagree", r.Test)
	}
	return fmt.Sprintf("the test binary stopped before %s started; it said:\n%s", r.Test, excerpt(tail(texts(v.lines), 15)))
}

func raceMessage(r Run, v view) string {
	i := v.find(markRace)
	if i < 0 { // only the testing package's note: show the test's failure
		return excerpt(v.from(v.find(markRaceTesting), r.Test))
	}
	block := []string{}
	for _, l := range v.lines[i:] {
		if strings.HasPrefix(l.text, "==================") {
			break
		}
		block = append(block, l.text)
	}
	return excerpt(block)
}

func leakMessage(r Run, v view) string {
	i := v.find(markLeak)
	if i < 0 {
		i = v.find(markGoleak)
	}
	return excerpt(v.from(i, r.Test))
}

// panicMessage is the panic line (with any nested "panic:" lines) and the
// first frames of the panicking goroutine, without the runtime's and the
// testing package's own frames.
func panicMessage(v view) string {
	i := v.panicLine()
	rest := texts(v.lines[i:])
	head := []string{}
	j := 0
	for ; j < len(rest) && j < 6 && !goroutineHeader.MatchString(rest[j]); j++ {
		if strings.TrimSpace(rest[j]) != "" {
			head = append(head, rest[j])
		}
	}
	if j < len(rest) { // the frames, without the "goroutine N [running]:" header
		head = append(head, goroutineBlock(rest[j:], 6)[1:]...)
	}
	return excerpt(head)
}

// timeoutMessage says that the test hung, and shows where: the watchdog's own
// report, or the goroutines of the test that the timeout's dump shows blocked.
func timeoutMessage(r Run, v view) string {
	i := v.find(markTimeout)
	if w := v.find(markWatchdog); w >= 0 {
		if i < w { // the watchdog said it all
			return excerpt(v.from(w, r.Test))
		}
		// The watchdog's report, then Go's timeout: the check stayed
		// blocked after the watchdog closed what it could.
		msg := v.from(w, r.Test)[:0:0]
		for _, l := range v.lines[w:i] {
			if l.test == v.lines[w].test && !isFraming(l.text, r.Test) && !isSummary(l.text) {
				msg = append(msg, l.text)
			}
		}
		msg = append(msg, fmt.Sprintf("and it was still blocked at its %s time limit", r.Timeout))
		if own := studentGoroutines(texts(v.lines[i:]), r.Student); len(own) > 0 {
			msg = append(msg, "where your code is stuck (goroutines with frames in "+r.Student+"):")
			msg = append(msg, own...)
		}
		return excerpt(msg)
	}
	if i < 0 { // killed without a word from the binary
		msg := fmt.Sprintf("the test binary did not stop by itself after its %s time limit and was killed", r.Timeout)
		if last := tail(texts(v.lines), 10); len(last) > 0 {
			msg += "; its last output:\n" + excerpt(last)
		}
		return msg
	}
	msg := []string{fmt.Sprintf("the test did not finish within its %s time limit", r.Timeout)}
	dump := texts(v.lines[i:])
	if own := studentGoroutines(dump, r.Student); len(own) > 0 {
		msg = append(msg, "where your code is stuck (goroutines with frames in "+r.Student+"):")
		return excerpt(append(msg, own...))
	}
	if r.Student != "" {
		msg = append(msg, "no goroutine was stuck in "+r.Student+": the test was waiting for something your code never did "+
			"(answer, close a connection, return); the test's own goroutines:")
	}
	return excerpt(append(msg, blockedGoroutines(dump, r.Test)...))
}

// studentGoroutines picks from a goroutine dump the goroutines with frames
// in the student's package directory, at most three, each as its header and
// those frames only: the suite's and the runtime's frames say nothing to a
// student.
func studentGoroutines(dump []string, dir string) []string {
	var out []string
	shown := 0
	for i := 0; i < len(dump) && shown < 3; i++ {
		if !goroutineHeader.MatchString(dump[i]) || strings.HasSuffix(dump[i], "[running]:") {
			continue
		}
		end := i + 1
		for end < len(dump) && strings.TrimSpace(dump[end]) != "" {
			end++
		}
		if frames := studentFrames(dump[i:end], dir, 4); len(frames) > 0 {
			out = append(append(out, dump[i]), frames...)
			shown++
		}
		i = end
	}
	return out
}

var goroutineHeader = regexp.MustCompile(`^goroutine \d+ \[[^\]]*\]:$`)

// blockedGoroutines picks from a goroutine dump the goroutines that run the
// test's code (their stacks mention the test function), at most three, each
// trimmed to its first frames.
func blockedGoroutines(dump []string, test string) []string {
	var out []string
	shown := 0
	for i := 0; i < len(dump) && shown < 3; i++ {
		if !goroutineHeader.MatchString(dump[i]) || strings.HasSuffix(dump[i], "[running]:") {
			continue
		}
		end := i + 1
		for end < len(dump) && strings.TrimSpace(dump[end]) != "" {
			end++
		}
		block := dump[i:end]
		if strings.Contains(strings.Join(block, "\n"), "."+test) {
			out = append(out, goroutineBlock(block, 4)...)
			shown++
		}
		i = end
	}
	return out
}

// goroutineBlock returns a goroutine's header and its first maxFrames frames
// from the code under test, skipping the runtime's and testing's frames. A
// frame is a function line followed by its tab-indented file line.
func goroutineBlock(lines []string, maxFrames int) []string {
	out := []string{lines[0]}
	frames := 0
	for k := 1; k < len(lines) && frames < maxFrames; k++ {
		fn := lines[k]
		if strings.TrimSpace(fn) == "" || goroutineHeader.MatchString(fn) {
			break
		}
		if strings.HasPrefix(fn, "\t") {
			continue // a file line whose function was skipped
		}
		var file []string
		if k+1 < len(lines) && strings.HasPrefix(lines[k+1], "\t") {
			file = lines[k+1 : k+2]
			k++
		}
		if isPlumbing(fn) {
			continue
		}
		out = append(out, fn)
		out = append(out, file...)
		frames++
	}
	return out
}

// isPlumbing reports stack frames that belong to Go itself rather than to
// the code a student wrote or the course's suites.
func isPlumbing(fn string) bool {
	fn = strings.TrimPrefix(fn, "created by ")
	for _, p := range []string{"runtime.", "testing.", "panic(", "main.main(", "time.goFunc", "sync.(*WaitGroup).Go"} {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}

// raceExitCode is the status the race detector ends a subject with (its
// GORACE, set by the grader, says so).
const raceExitCode = 66

// subjectEnd states the cause when the subject of a judged run ended before
// its time: a race (the race detector ends it with raceExitCode), a panic, or
// an exit. The judge says whether it ended during the check (markGone); its
// exit status says how. What the subject printed only locates the place.
func subjectEnd(r Run, v view, s SubjectRun) (Cause, string) {
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

// subjectRaceReport is the race detector's report in out: from its first warning.
func subjectRaceReport(out []string) []string {
	for i, l := range out {
		if strings.Contains(l, markRace) {
			return out[i:]
		}
	}
	return nil
}

// panicReport is a panic's message and stack in out.
func panicReport(out []string) []string {
	for i, l := range out {
		if strings.HasPrefix(l, markPanic) || strings.HasPrefix(l, markFatal) {
			return out[i:]
		}
	}
	return out
}

func head(lines []string, n int) []string { return lines[:min(n, len(lines))] }

// cpuNote says how much processor time a run that timed out got: a check
// that got little of its wall-clock time was starved by a busy machine.
func cpuNote(r Run) string {
	if r.Wall <= 0 {
		return ""
	}
	cpu := r.CPU
	if r.Subject != nil {
		cpu += r.Subject.CPU
	}
	return fmt.Sprintf("\n(the check's processes got %.1f s of CPU in %.1f s)", cpu.Seconds(), r.Wall.Seconds())
}
