// Time: the run's budget, and a busy machine. A busy machine must not cost a
// correct solution its points: time limits
// grow with the load (busyScale), and an exercise that timed out beside
// others runs again alone before it is charged (rerunAlone).

package grade

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"serverlab/tests/testkit"
)

// rerunAlone runs each exercise that timed out beside others once more, now
// alone on the machine and with twice the time, before its timeout is
// charged: a correct solution must not lose a point to a busy machine. It
// returns the report's notes on what it did.
func rerunAlone(ctx context.Context, rn *runner, timedOut []job) []string {
	var notes []string
	for _, j := range timedOut {
		if ctx.Err() != nil {
			break
		}
		if blocked(j.result.Message) {
			continue // it hung, not for want of a processor: again would hang again
		}
		first := j.result.Message
		j.again = 2 // runJob scales the limit and the waits by the load, then doubles them
		var done sync.WaitGroup
		done.Add(1)
		j.done = &done
		runJob(ctx, rn, j)
		if j.result.Passed {
			notes = append(notes, fmt.Sprintf("%s timed out beside other exercises and passed when run again alone, with twice the time", j.result.ID))
			continue
		}
		if j.result.Cause == CauseTimeout {
			j.result.Message = first + "\n(it also timed out when run again alone, with twice the time)"
		} else {
			j.result.Message += "\n(run again alone after a first run that timed out: " + FirstLines([]byte(first), 1) + ")"
		}
	}
	return notes
}

// blocked says whether a timed-out exercise's message is the course
// watchdog's finding that a call was blocked while the check had the CPU it
// needed: a hang that more time does not cure.
func blocked(msg string) bool {
	return strings.Contains(msg, markWatchdog) && strings.Contains(msg, testkit.WatchdogBlocked)
}

// busyScale is how much longer the checks should wait on this machine: its
// load average per core, when that is above one and a half (at most 4). The
// suites apply the same rule themselves under a plain go test
// (testkit.BusyScale).
func busyScale() float64 { return testkit.BusyScale(loadAverage(), runtime.NumCPU()) }

// scaled is an exercise's time limit on a machine whose checks wait scale
// times as long: the limit grows with the waits, or a check that waits for a
// scaled deadline (a stub's failure path, say) would outlast a fixed limit.
func scaled(limit time.Duration, scale float64) time.Duration {
	return time.Duration(float64(limit) * max(scale, 1))
}

// loadAverage is how many runnable tasks the machine has (see
// testkit.LoadAverage).
func loadAverage() float64 { return testkit.LoadAverage() }

// notRunBudget marks what is left of a chapter as not run for lack of time.
func notRunBudget(ch *ChapterResult, budget time.Duration, when string) {
	for i := range ch.Exercises {
		ex := &ch.Exercises[i]
		if ex.Cause == CauseNotRun && ex.Message == "" {
			ex.Message = budgetMessage(budget, when)
		}
	}
}

func budgetMessage(budget time.Duration, when string) string {
	return fmt.Sprintf("the grading budget (-budget %s) ran out %s; the exercises graded before it keep their points", budget, when)
}

// measureLoad is the scale for an exercise about to start (busyScale), and
// it remembers the largest, with its load, for the report's note.
func (rn *runner) measureLoad() float64 {
	load := loadAverage()
	scale := testkit.BusyScale(load, runtime.NumCPU())
	rn.mu.Lock()
	defer rn.mu.Unlock()
	if scale > rn.maxScale {
		rn.maxScale, rn.maxLoad = scale, load
	}
	return scale
}

// busiest is the largest scale an exercise of this run started with, and
// the load it was measured at.
func (rn *runner) busiest() (scale, load float64) {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	return rn.maxScale, rn.maxLoad
}
