// The messages that explain a lost point: what the test said, the student's
// frames of a panic or a hang, the race report, the leak, the CPU a timed-out
// check got. classify.go decides the cause; this file words it.

package grade

import (
	"fmt"
	"strings"
)

func failedMessage(r Run, v view) string {
	if own := failureFirst(v, r.Test); len(own) > 0 {
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
