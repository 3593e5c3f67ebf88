package testkit

import (
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"testing"

	"go.uber.org/goleak"

	"serverlab/tests/judge"
)

// Main is the TestMain of every chapter's test wiring, which passes it the
// chapter's Impl values.
//
// Under go test it runs the tests, in this process, and then fails the
// binary if any goroutine outlives them all, a second line of defence
// behind the per-check leak check of New.
//
// Under tools/cmd/grade the same wiring is built twice (see tests/judge): in the
// subject, built from the student's code, Main serves impls to the judge and
// runs no test; in the judge, built without the student's code, the checks
// run against the subject, and the subject's last leak report decides the
// leak check.
func Main(m *testing.M, impls ...any) {
	if judge.IsSubject() {
		os.Exit(judge.Serve(impls...))
	}
	goleak.VerifyTestMain(m, append(judge.LeakOptions(), goleak.Cleanup(func(code int) {
		if code == 0 {
			if report := judge.Finish(); report != "" {
				fmt.Fprintf(os.Stderr, "%s goroutines of the student's code were still running after every check.\n"+
					"Likely cause: Close must stop every goroutine the server started and wait for it.\n\n%s\n",
					LeakMarker, report)
				code = 1
			}
		}
		os.Exit(code)
	}))...)
}

// ReadMemStats is runtime.ReadMemStats of the process that runs the code
// under test: the subject's under tools/cmd/grade, this one's under go test.
func ReadMemStats(m *runtime.MemStats) { *m = judge.MemStats() }

// Logger is the logger servers under test should use: errors only by default,
// so that test output shows failures, and verbose with SERVERLAB_LOG=debug.
func Logger() *slog.Logger {
	level := slog.LevelError
	if os.Getenv("SERVERLAB_LOG") == "debug" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// GC is runtime.GC in the process that runs the code under test.
func GC() { judge.GC() }
