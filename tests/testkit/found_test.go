package testkit

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestChildFindsThenHangs: a first check fails with a clear cause, a second
// one (waiting for what the first showed never comes) hangs past the
// watchdog.
func TestChildFindsThenHangs(t *testing.T) {
	onlyInChild(t)
	shortWaits()
	WatchdogTimeout = time.Second
	t.Run("first", func(t *testing.T) {
		New(t, "9.6").Fatalf("the first check's finding: no 126 after the login")
	})
	t.Run("second", func(t *testing.T) {
		k := New(t, "9.6")
		k.OnAbort(func() { select {} })
		select {}
	})
}

// TestWatchdogEndKeepsEarlierFindings: when the watchdog ends the process of
// a plain go test (no -v), what the earlier checks found is printed before
// its report, not lost with the buffered output of the unfinished test.
func TestWatchdogEndKeepsEarlierFindings(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildFindsThenHangs$")
	cmd.Env = append(os.Environ(), childEnv+"=TestChildFindsThenHangs")
	out, err := cmd.CombinedOutput()
	if exit := (*exec.ExitError)(nil); !errors.As(err, &exit) {
		t.Fatalf("child: want it to fail, got err %v\n%s", err, out)
	}
	first := strings.Index(string(out), "the first check's finding")
	watchdog := strings.Index(string(out), WatchdogMarker+" exercise 9.6 did not finish")
	if first < 0 || watchdog < 0 || first > watchdog {
		t.Errorf("want the first check's finding, then the watchdog's report (positions %d, %d):\n%s", first, watchdog, out)
	}
}
