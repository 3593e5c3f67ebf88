package testkit

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// TimeScaleEnv names the factor tools/cmd/grade multiplies the waits by on a
// busy machine (and when it runs a timed-out exercise again alone).
const TimeScaleEnv = "SERVERLAB_TIME_SCALE"

// TimeScale is the factor this process's waits were multiplied by: the
// grader's, or, under a plain go test, the one the process measured itself
// (BusyScale), so that a student's go test holds on a busy machine as the
// grader's runs do.
var TimeScale = 1.0

func init() {
	f, err := strconv.ParseFloat(os.Getenv(TimeScaleEnv), 64)
	if err != nil {
		f = BusyScale(LoadAverage(), runtime.NumCPU())
	}
	if f > 1 && f <= 10 {
		TimeScale = f
		IOTimeout = time.Duration(float64(IOTimeout) * f)
		WatchdogTimeout = time.Duration(float64(WatchdogTimeout) * f)
	}
}

// BusyScale is how much longer checks should wait on a machine with this
// load average and number of processors: the load per processor when it is
// above one and a half, at most 4. tools/cmd/grade uses the same rule.
func BusyScale(load float64, cpus int) float64 {
	per := load / float64(max(cpus, 1))
	if per <= 1.5 {
		return 1
	}
	return min(per, 4)
}

// LoadAverage is how many runnable tasks the machine has (Linux; 0
// elsewhere): the one-minute load average, or the tasks runnable right now
// (less the one reading) when there are more, since the average lags a
// minute behind busy loops just started.
func LoadAverage() float64 {
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

// schedTimes is what the scheduler says of the processes that run a check
// (this one and, under tools/cmd/grade, the subject): the time their threads
// ran, and the time they waited, runnable, for a processor.
type schedTimes struct{ ran, waited time.Duration }

func checkSched() schedTimes {
	t := procSched("/proc/self")
	if ServerPID() != os.Getpid() {
		s := procSched(ServerProc())
		t.ran += s.ran
		t.waited += s.waited
	}
	return t
}

// procSched sums the schedstat of every thread of the process at dir
// (Linux; zero elsewhere).
func procSched(dir string) schedTimes {
	var t schedTimes
	tasks, _ := filepath.Glob(dir + "/task/*/schedstat")
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		fields := strings.Fields(string(b))
		if len(fields) < 2 {
			continue
		}
		run, _ := strconv.ParseInt(fields[0], 10, 64)
		wait, _ := strconv.ParseInt(fields[1], 10, 64)
		t.ran += time.Duration(run)
		t.waited += time.Duration(wait)
	}
	return t
}

// starved says, when a check ran out of time, whether the machine was too
// busy to give it a processor: its processes waited, runnable, for more
// than a quarter of the time, and ran at least a hundredth of it. Then ""
// is not returned but the figures. The second condition matters on a very
// busy machine: a check blocked in a call still has threads that wake up
// (the runtime's monitor, timers), each of which waits for a processor,
// and their waits add up to much of the time (0.7 s in 1 s at load 45)
// while they run almost nothing; a starved check that has work gets its
// share, a few hundredths at least.
func starved(since schedTimes, wall time.Duration) string {
	now := checkSched()
	return starvedFigures(now.ran-since.ran, now.waited-since.waited, wall)
}

// starvedFigures is starved's rule on the figures it read.
func starvedFigures(ran, waited, wall time.Duration) string {
	if waited < wall/4 || ran < wall/100 {
		return ""
	}
	return fmt.Sprintf("ran out of time: the check got %.1f s of CPU in %.0f s and waited %.1f s for a processor "+
		"(the machine was busy; nothing shows that a call was blocked)", ran.Seconds(), wall.Seconds(), waited.Seconds())
}
