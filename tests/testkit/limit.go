package testkit

import (
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"
)

// LimitEnv names the time limit tools/cmd/grade gives an exercise, and how
// many times it may be extended for a busy machine, as "2m40s/2". The judge
// keeps it (keepLimit) instead of go test's -test.timeout, which the grader
// sets past the last extension as a backstop.
const LimitEnv = "SERVERLAB_LIMIT"

// A wall-clock limit charges an exercise for time it could not run. Beside
// sixteen busy loops on two cores, chapter 01's exercise 1.1 got 12.7 s of
// CPU in its 160 s and timed out, as it did when run again alone with twice
// the time, because the loops were still there. The grader scales its
// limits by the load it measures (at most 4 times); past that, the judge
// extends the limit while the exercise's processes were starved of a
// processor, by the rule the watchdog uses for one check (starvedFigures),
// up to the number of extensions the grader allows. A hung exercise gets no
// extension: its threads wait for nothing and run nothing.

// The grader gives LimitEnv to the judge alone; it is removed from the
// environment, so that programs a check starts do not keep a limit of
// their own.
func init() {
	limit, extensions, ok := ParseLimit(os.Getenv(LimitEnv))
	os.Unsetenv(LimitEnv)
	if ok {
		keepLimit(limit, extensions, time.Now())
	}
}

// FormatLimit is LimitEnv's value for a limit and its extensions.
func FormatLimit(limit time.Duration, extensions int) string {
	return fmt.Sprintf("%s/%d", limit, extensions)
}

// ParseLimit reads LimitEnv's value.
func ParseLimit(s string) (limit time.Duration, extensions int, ok bool) {
	l, e, found := strings.Cut(s, "/")
	if !found {
		return 0, 0, false
	}
	limit, err := time.ParseDuration(l)
	if err != nil || limit <= 0 {
		return 0, 0, false
	}
	extensions, err = strconv.Atoi(e)
	if err != nil || extensions < 0 {
		return 0, 0, false
	}
	return limit, extensions, true
}

// limitKeeper ends the test binary as go test's -test.timeout would, with
// the same panic (tools/cmd/grade classifies it the same way), once the
// exercise has used its limit and was not starved.
type limitKeeper struct {
	mu         sync.Mutex
	limit      time.Duration
	extensions int // left
	start      time.Time
	timer      *time.Timer
}

func keepLimit(limit time.Duration, extensions int, start time.Time) *limitKeeper {
	l := &limitKeeper{limit: limit, extensions: extensions, start: start}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.timer = time.AfterFunc(limit, l.fire)
	return l
}

// fire runs when a limit has passed: it looks at the exercise's processes
// for a moment (starveWindow), then extends the limit once more if they were
// starved, and otherwise ends the binary with its goroutines. The moment,
// not the whole run, decides: over minutes at a moderate load the idle
// threads of a hung exercise add up to waits that look like starvation,
// while in one second they wait and run almost nothing.
func (l *limitKeeper) fire() {
	before := checkSched()
	time.AfterFunc(starveWindow, func() {
		now := checkSched()
		if l.extend(starvedFigures(now.ran-before.ran, now.waited-before.waited, starveWindow) != "") {
			return
		}
		debug.SetTraceback("all")
		panic(fmt.Sprintf("test timed out after %v", time.Since(l.start).Round(time.Second)))
	})
}

// starveWindow is how long the limit keeper watches an exercise's
// processes before it decides whether they were starved.
const starveWindow = time.Second

// extend restarts the timer if the exercise was starved and an extension is
// left, and reports whether it did.
func (l *limitKeeper) extend(starved bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !starved || l.extensions == 0 {
		return false
	}
	l.extensions--
	l.timer.Reset(l.limit)
	return true
}
