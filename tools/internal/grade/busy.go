// Time: the run's budget, and a busy machine. A busy machine must not cost a
// correct solution its points: time limits
// grow with the load (busyScale), and an exercise that timed out beside
// others runs again alone before it is charged (rerunAlone).

package grade

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
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
		first := j.result.Message
		j.timeout *= 2
		j.scale = max(j.scale, 1) * 2
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

// busyScale is how much longer the checks should wait on this machine: its
// load average per core, when that is above one and a half (at most 4).
func busyScale() float64 {
	per := loadAverage() / float64(runtime.NumCPU())
	if per <= 1.5 {
		return 1
	}
	return min(per, 4)
}

// scaled is an exercise's time limit on a machine whose checks wait scale
// times as long: the limit grows with the waits, or a check that waits for a
// scaled deadline (a stub's failure path, say) would outlast a fixed limit.
func scaled(limit time.Duration, scale float64) time.Duration {
	return time.Duration(float64(limit) * max(scale, 1))
}

// loadAverage is how many runnable tasks the machine has (Linux; 0
// elsewhere): the one-minute load average, or the tasks runnable right now
// (less the one reading) when there are more. The average lags a minute
// behind: busy loops started just before grading (make stress, a second
// grader) would not show in it yet.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	avg, _ := strconv.ParseFloat(f[0], 64)
	if len(f) > 3 {
		if running, _, ok := strings.Cut(f[3], "/"); ok {
			if n, err := strconv.Atoi(running); err == nil {
				avg = max(avg, float64(n-1))
			}
		}
	}
	return avg
}

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
