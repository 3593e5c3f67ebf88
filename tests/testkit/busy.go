package testkit

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// TimeScaleEnv names the factor tools/cmd/grade multiplies the waits by on a
// busy machine (and when it runs a timed-out exercise again alone).
const TimeScaleEnv = "SERVERLAB_TIME_SCALE"

func init() {
	if f, err := strconv.ParseFloat(os.Getenv(TimeScaleEnv), 64); err == nil && f > 1 && f <= 10 {
		IOTimeout = time.Duration(float64(IOTimeout) * f)
		WatchdogTimeout = time.Duration(float64(WatchdogTimeout) * f)
	}
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
// than a quarter of the time. Then "" is not returned but the figures.
func starved(since schedTimes, wall time.Duration) string {
	now := checkSched()
	ran, waited := now.ran-since.ran, now.waited-since.waited
	if waited < wall/4 {
		return ""
	}
	return fmt.Sprintf("ran out of time: the check got %.1f s of CPU in %.0f s and waited %.1f s for a processor "+
		"(the machine was busy; nothing shows that a call was blocked)", ran.Seconds(), wall.Seconds(), waited.Seconds())
}
