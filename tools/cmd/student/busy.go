package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"serverlab/tests/testkit"
)

// machineLoad is what the student commands say of a busy machine. Avg1 is
// the one-minute load average, the first figure uptime shows: the figure a
// note quotes, so that a student who checks it with uptime finds it.
// Runnable is how many tasks want a CPU right now, which the tests' waits
// also count (testkit.LoadAverage: the average lags a minute behind busy
// loops just started); a note adds it only when it says more.
type machineLoad struct {
	Avg1     float64
	Runnable int
	CPUs     int
}

// readLoad reads /proc/loadavg ("0.52 0.58 0.59 3/611 12345"); zero
// figures where there is none (not Linux).
func readLoad(path string) machineLoad {
	l := machineLoad{CPUs: runtime.NumCPU()}
	b, err := os.ReadFile(path)
	if err != nil {
		return l
	}
	f := strings.Fields(string(b))
	if len(f) > 0 {
		l.Avg1, _ = strconv.ParseFloat(f[0], 64)
	}
	if len(f) > 3 {
		if running, _, ok := strings.Cut(f[3], "/"); ok {
			if n, err := strconv.Atoi(running); err == nil {
				l.Runnable = n - 1 // less the task that reads
			}
		}
	}
	return l
}

// scale is how much longer the tests wait before failing a check on this
// load: testkit.BusyScale, from the larger of the two figures, as the
// tests themselves reckon it.
func (l machineLoad) scale() float64 {
	return testkit.BusyScale(max(l.Avg1, float64(l.Runnable)), l.CPUs)
}

// String is the load as a note quotes it: the figure uptime shows, and the
// runnable tasks when they are more.
func (l machineLoad) String() string {
	s := fmt.Sprintf("load average %.1f on %d CPUs, as uptime shows it", l.Avg1, l.CPUs)
	if float64(l.Runnable) > l.Avg1+1 {
		s += fmt.Sprintf("; %d tasks want a CPU right now", l.Runnable)
	}
	return s
}

// busyLine says, after tests ran on a busy machine, what the load cost:
// the tests' waits grow with it (testkit.BusyScale, as under the grader),
// so a failing check takes longer to fail, and everything takes longer to
// build and run. "" on a machine that is not busy.
func busyLine(l machineLoad, took time.Duration) string {
	scale := l.scale()
	if scale <= 1 {
		return ""
	}
	return fmt.Sprintf("note: this machine is busy (%s): this took %s, and the tests wait up to %.1f× as long "+
		"before failing a check; a quiet machine is faster", l, took.Round(time.Second), scale)
}

// busyBefore says, before tests run on a busy machine, what is about to be
// slow and why: go test prints nothing until a package's tests end, and
// on a busy machine that can be minutes (student3: 8.5 ran 2 min 10 s at
// load 30-45 without a word). "" on a machine that is not busy.
func busyBefore(l machineLoad, what string) string {
	scale := l.scale()
	if scale <= 1 {
		return ""
	}
	return fmt.Sprintf("note: this machine is busy (%s): %s get a small share of a CPU and wait up to %.1f× "+
		"as long before failing a check, so they can take minutes; go test prints nothing until they end", l, what, scale)
}

// loadNow is the machine's load as the commands quote it.
func loadNow() machineLoad { return readLoad("/proc/loadavg") }
