// Package testkit is what every suite in tests/ is built on: a per-test
// harness that checks for leaked goroutines, fails a hung test with a clear
// message instead of letting the binary time out, starts servers on
// 127.0.0.1:0 and dials them with deadlines, and prints sent / want / got when
// an exchange goes wrong.
//
// A suite's check starts with
//
//	k := testkit.New(t, "1.4")
//
// and from then on uses k for everything that can block. Every failure message
// ends with the exercise id and the lesson to read, so a student knows where
// to look.
package testkit

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"serverlab/tests/judge"
	"serverlab/tools/given/lab"
)

// Markers at the start of the failures this package reports (tools/cmd/grade
// reads them to state the cause of a lost point).
const (
	LeakMarker     = lab.LeakMarker
	WatchdogMarker = lab.WatchdogMarker
	// WatchdogBlocked is how the watchdog's report says that the check was
	// blocked, not starved of CPU: running it again, with more time, would
	// only hang again (tools/cmd/grade then charges it at once).
	WatchdogBlocked = "a call is blocked"
)

// Defaults for waiting. Generous, because -race slows everything down and CI
// machines are shared; a correct server answers in microseconds, so these only
// bound how long a broken one can keep a test waiting.
var (
	// IOTimeout bounds every single network wait (a dial, a read, a write).
	IOTimeout = 5 * time.Second
	// WatchdogTimeout bounds a whole check.
	WatchdogTimeout = 30 * time.Second
)

// T is the per-check harness. It embeds *testing.T, so a suite uses it as it
// would use t.
type T struct {
	*testing.T
	exercise string

	mu      sync.Mutex
	done    bool     // the check has finished; the watchdog must stay quiet
	aborts  []func() // run by the watchdog to unblock a hung check
	timer   *time.Timer
	started time.Time
	sched   schedTimes // the scheduler's figures at the start (see starved)

	// stopped is closed when the check's own cleanups are done and the
	// watchdog stops; report is what the watchdog said (see endIfStuck);
	// extended is how many times it gave a starved check more time.
	stopped  chan struct{}
	report   string
	extended int

	seeded  bool   // Rand has chosen the check's seed
	seed    uint64 // the seed every Rand source derives from
	streams uint64 // how many sources Rand has handed out
}

// New prepares t for the check of one exercise (an id such as "1.4"):
//
//   - the goroutine-leak check is registered first, so that it runs last,
//     after the servers and connections the check opens are closed;
//   - a watchdog fails the check if it runs longer than WatchdogTimeout, and
//     closes what the check opened so that blocked calls return; a check
//     still blocked abortGrace later ends its test process (endIfStuck).
//
// The exercise is the one the chapter's test wiring names: a check called
// from TestEx5_9_ChatLogin grades exercise 5.9, whatever default the suite
// passed. So one suite serves several chapters (the chat suite grades 2.1 in
// chapter 02 and 5.9 in chapter 05) and its messages point at the right lesson.
func New(t *testing.T, exercise string) *T {
	t.Helper()
	if id, ok := exerciseFromName(t.Name()); ok {
		exercise = id
	}
	k := &T{T: t, exercise: exercise, started: time.Now(), sched: checkSched(), stopped: make(chan struct{})}
	t.Cleanup(k.leakCheck())
	k.timer = time.AfterFunc(WatchdogTimeout, k.fire)
	t.Cleanup(k.stopWatchdog)
	return k
}

// wiringName matches the name of a chapter's test function, TestEx<ch>_<n>_.
var wiringName = regexp.MustCompile(`^TestEx(\d+)_(\d+)_`)

// exerciseFromName returns "5.9" for a test named TestEx5_9_ChatLogin (or a
// subtest of it).
func exerciseFromName(name string) (string, bool) {
	m := wiringName.FindStringSubmatch(name)
	if m == nil {
		return "", false
	}
	return m[1] + "." + m[2], true
}

// Exercise is the id of the exercise this check grades.
func (k *T) Exercise() string { return k.exercise }

// Where says where a student should look; it ends every failure message.
func (k *T) Where() string {
	ch, _, _ := strings.Cut(k.exercise, ".")
	if len(ch) == 1 {
		ch = "0" + ch
	}
	return fmt.Sprintf("(exercise %s: see chapters/%s/README.md)", k.exercise, ch)
}

// Fatalf fails the check at once, naming the exercise. Like testing.T.Fatalf it
// must be called from the check's own goroutine.
func (k *T) Fatalf(format string, args ...any) {
	k.Helper()
	msg := fmt.Sprintf("%s%s\n%s", k.noteOnce(), fmt.Sprintf(format, args...), k.Where())
	found.remember(k.Name(), msg)
	k.T.Fatalf("%s", msg)
}

// Errorf records a failure, naming the exercise, and lets the check go on. It
// may be called from any goroutine.
func (k *T) Errorf(format string, args ...any) {
	k.Helper()
	msg := fmt.Sprintf("%s%s\n%s", k.noteOnce(), fmt.Sprintf(format, args...), k.Where())
	found.remember(k.Name(), msg)
	k.T.Errorf("%s", msg)
}

// found keeps the first failures of this process's checks, so that a
// watchdog that ends the process (endIfStuck) can print them first. Without
// -v the testing package prints a check's failure only when its top-level
// test ends, which it then never does: the cause an earlier check had found
// ("should receive 126 after its own login") was lost, and the student read
// only the watchdog's report about a later check that waited for the same
// missing message, and went to fix Close.
var found foundFailures

type foundFailures struct {
	mu      sync.Mutex
	reports []string
}

// maxFound is how many failures found keeps: the first ones name the cause.
const maxFound = 5

func (f *foundFailures) remember(check, msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reports) < maxFound {
		f.reports = append(f.reports, fmt.Sprintf("--- FAIL: %s\n%s\n", check, msg))
	}
}

func (f *foundFailures) all() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.reports, "")
}

// OnAbort registers f to run if the watchdog fires: it should close whatever a
// blocked call may be waiting on. Servers and connections opened through k are
// registered already.
func (k *T) OnAbort(f func()) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.aborts = append(k.aborts, f)
}

func (k *T) fire() {
	k.mu.Lock()
	if k.done {
		k.mu.Unlock()
		return
	}
	// Report while holding mu: the check cannot finish (stopWatchdog takes mu)
	// until the report is made, so Errorf is never called on a finished test.
	// A check that waited for a processor most of the time was starved, not
	// blocked: say so (tools/cmd/grade runs it again alone before charging it).
	busy := starved(k.sched, time.Since(k.started))
	if busy != "" && k.extended < maxExtensions {
		// Starved, not blocked: the machine is busier than the scale
		// measured at the start foresaw. Charge only time the check could
		// run: wait once more, up to maxExtensions times.
		k.extended++
		k.timer.Reset(WatchdogTimeout)
		k.mu.Unlock()
		return
	}
	aborts := k.aborts
	k.aborts = nil
	note := k.noteOnce() // the earlier exercises still stubs, said first
	if busy != "" {
		k.report = fmt.Sprintf("%s exercise %s did not finish within %v: %s.\nClosing its servers and connections.\n%s",
			WatchdogMarker, k.exercise, time.Since(k.started).Round(time.Second), busy, k.Where())
	} else {
		k.report = fmt.Sprintf("%s exercise %s did not finish within %v: %s "+
			"(a read without a deadline? a lock never released? Close not returning?).\n"+
			"Closing its servers and connections to unblock it.\n%s%s",
			WatchdogMarker, k.exercise, WatchdogTimeout, WatchdogBlocked, stuckGoroutines()+closeWaits(), k.Where())
	}
	k.T.Errorf("%s%s", note, k.report)
	k.mu.Unlock()
	// The aborts run on their own: one of them may block too (closing a
	// server whose Close never returns), and the grace starts now.
	go func() {
		for i := len(aborts) - 1; i >= 0; i-- {
			aborts[i]()
		}
	}()
	k.endIfStuck()
}

// maxExtensions is how many more WatchdogTimeouts a check that waited for a
// processor most of the time gets before the watchdog fails it.
const maxExtensions = 2

// abortGrace is how long a check has, once the watchdog has closed its
// servers and connections, to return and run its cleanups: time for a
// Close that was waiting on them to see them closed, and no more.
func abortGrace() time.Duration { return max(WatchdogTimeout/6, IOTimeout) }

// endIfStuck ends the test process when the check is still blocked
// abortGrace after the watchdog's aborts: a call that closing every server
// and connection did not unblock (a Close waiting for a goroutine that waits
// for ever) would otherwise hold the binary until go test's own -timeout,
// minutes later, and then bury the report in every goroutine's stack. Under
// tools/cmd/grade each exercise runs in its own process, so this costs the
// hung exercise only; under go test the checks after it in the same run do
// not run, and the message says how to run them.
func (k *T) endIfStuck() {
	select {
	case <-k.stopped:
		return
	case <-time.After(abortGrace()):
	}
	var b strings.Builder
	if !testing.Verbose() {
		// Without -v the testing package prints a check's failure when its
		// test ends, and this process's never will: say here what the
		// checks before it found, then this one.
		b.WriteString(found.all())
		fmt.Fprintf(&b, "--- FAIL: %s\n%s\n", k.Name(), k.report)
	}
	fmt.Fprintf(&b, "%s exercise %s is still blocked %v after its servers and connections were closed: "+
		"ending the test process (%s). The checks after it did not run: run them with go test -run.\n",
		WatchdogMarker, k.exercise, abortGrace(), k.Name())
	fmt.Fprint(os.Stdout, b.String())
	os.Exit(1)
}

func (k *T) stopWatchdog() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.done {
		close(k.stopped)
	}
	k.done = true
	k.timer.Stop()
}

// leakCheck marks the goroutines running now and returns the check, to run
// at cleanup, that fails the check if goroutines started since are still
// running: in this process under go test, in the subject under tools/cmd/grade.
// goleak retries for a while, so goroutines that are merely on their way
// out are not reported.
func (k *T) leakCheck() func() {
	snap := judge.Snapshot()
	return func() {
		if why := judge.Refused(); why != "" {
			k.T.Errorf("%s", why) // the subject sent more than the judge takes: a failure, not a subject gone
			return
		}
		if judge.Lost() {
			k.T.Errorf("%s the process that runs the student's code ended during the check of exercise %s "+
				"(the grader's report says how)", lab.SubjectGoneMarker, k.exercise)
			return
		}
		if report := judge.Leaks(snap); report != "" {
			k.reportLeak(report)
		}
	}
}

func (k *T) reportLeak(report string) {
	frames := courseFrames(report)
	k.T.Errorf("%s goroutines outlived the check of exercise %s.\n"+
		"Where they are (frames from this course):\n%s\n"+
		"Likely cause: %s\n%s\n\n"+
		"The goroutines, the course's first (runtime frames cut):\n%v",
		LeakMarker, k.exercise, frames, leakCause(frames), k.Where(), boundedStacks(report))
}

// closeWaits is, when a hung check's Close is among what is blocked, what
// it waits for (stillRunning), to end the watchdog's list of where.
func closeWaits() string {
	if r := stillRunning(); strings.HasPrefix(r, "Close is waiting") {
		return r + "\n"
	}
	return ""
}

// leakCause is the leak report's likely cause. A Close among the leaked
// goroutines did its part (it waits) but is still waiting: what it waits for
// never ends, and telling the student to make Close wait would send them
// the wrong way.
func leakCause(frames string) string {
	if strings.Contains(frames, ".Close") && !strings.Contains(frames, "\n") {
		return "Close itself is still running, and nothing else of the server is: what it waits for can no " +
			"longer happen. Most often a WaitGroup Add without its Done (a goroutine that returns, or an error " +
			"path, without calling Done; defer wg.Done() first thing in the goroutine); else a lock never " +
			"unlocked or a channel nobody closes: the stack below says which."
	}
	if strings.Contains(frames, ".Close") {
		return "Close itself is still running: it waits for a goroutine that never ends or a count never " +
			"released (a WaitGroup Add without its Done, a reference to a connection never released, a channel " +
			"nobody closes). Find what it waits for; the other goroutines listed are where to look."
	}
	return "Close must stop every goroutine the server started and wait for it " +
		"(a sync.WaitGroup), and close every connection so that blocked reads return."
}

// courseFrames extracts, from goleak's report, the first function of this
// module in each leaked goroutine's stack: the place a student recognises.
func courseFrames(report string) string {
	var out []string
	seen := map[string]bool{}
	inGoroutine := false
	for _, line := range strings.Split(report, "\n") {
		switch {
		case strings.HasPrefix(strings.TrimLeft(line, "["), "Goroutine "):
			inGoroutine = true
		case inGoroutine && strings.HasPrefix(line, "serverlab/") && !strings.Contains(line, "/testkit."):
			fn := line
			if i := strings.LastIndexByte(fn, '('); i > 0 && strings.HasSuffix(fn, ")") {
				fn = fn[:i]
			}
			if !seen[fn] {
				seen[fn] = true
				out = append(out, "  "+fn)
			}
			inGoroutine = false
		}
	}
	if len(out) == 0 {
		return "  (no frame from this module; see the full report)"
	}
	return strings.Join(out, "\n")
}
