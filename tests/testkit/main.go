package testkit

import (
	"log/slog"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// Main is the TestMain of every chapter's test wiring: it runs the tests and
// then fails the binary if any goroutine outlives them all, a second line of
// defence behind the per-check leak check of New. Under tools/grade it then
// writes the run's completion records (record.go).
func Main(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		writeRecords(code)
		os.Exit(code)
	}))
}

// Logger is the logger servers under test should use: errors only by default,
// so that test output shows failures, and verbose with SERVERLAB_LOG=debug.
func Logger() *slog.Logger {
	level := slog.LevelError
	if os.Getenv("SERVERLAB_LOG") == "debug" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}
