package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"serverlab/tools/monitor/procstat"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// runMonitor runs the command in-process with a deadline.
func runMonitor(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	code = run(ctx, args, &out, &errOut)
	if ctx.Err() != nil {
		t.Fatalf("monitor %q still running after 30s", args)
	}
	return code, out.String(), errOut.String()
}

// parseSamples reads monitor's CSV and checks its header.
func parseSamples(t *testing.T, text string) [][]string {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil {
		t.Fatalf("reading CSV %q: %v", text, err)
	}
	if len(rows) == 0 || strings.Join(rows[0], ",") != strings.Join(procstat.CSVHeader(), ",") {
		t.Fatalf("CSV %q: want the header %v first", text, procstat.CSVHeader())
	}
	return rows[1:]
}

func TestMonitorPid(t *testing.T) {
	out := filepath.Join(t.TempDir(), "self.csv")
	args := []string{"-pid", strconv.Itoa(os.Getpid()), "-interval", "20ms", "-duration", "200ms", "-o", out}
	code, _, stderr := runMonitor(t, args...)
	if code != 0 {
		t.Fatalf("monitor %q: exit %d\n%s", args, code, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	rows := parseSamples(t, string(data))
	if len(rows) == 0 {
		t.Fatalf("monitor %q wrote no samples", args)
	}
	for _, row := range rows {
		rss, _ := strconv.Atoi(row[3])
		threads, _ := strconv.Atoi(row[5])
		if rss <= 0 || threads < 1 {
			t.Errorf("sample of the test process %q: want RSS > 0 and threads >= 1", row)
		}
	}
	if want := fmt.Sprintf("%d samples", len(rows)); !strings.Contains(stderr, want) {
		t.Errorf("summary should say %q:\n%s", want, stderr)
	}
}

// TestMonitorCommandStoppedAtDuration starts a long command; monitor must stop
// it at -duration and succeed.
func TestMonitorCommandStoppedAtDuration(t *testing.T) {
	start := time.Now()
	code, stdout, stderr := runMonitor(t, "-interval", "20ms", "-duration", "300ms", "--", "sleep", "60")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if elapsed := time.Since(start); elapsed > 20*time.Second {
		t.Errorf("monitor took %v: the command was not stopped at -duration", elapsed)
	}
	if rows := parseSamples(t, stdout); len(rows) == 0 {
		t.Errorf("no samples of the command:\n%s", stdout)
	}
}

func TestMonitorCommandFailure(t *testing.T) {
	code, _, stderr := runMonitor(t, "-interval", "20ms", "--", "sh", "-c", "echo to-stdout; exit 3")
	if code != 1 || !strings.Contains(stderr, "exit status 3") {
		t.Errorf("command exiting 3: monitor exit %d, stderr %q; want 1 and the status", code, stderr)
	}
	// With the CSV on stdout, the command's output must go to stderr.
	if !strings.Contains(stderr, "to-stdout") {
		t.Errorf("the command's stdout should be on monitor's stderr:\n%s", stderr)
	}
}

func TestMonitorNoSuchPid(t *testing.T) {
	// Pids wrap below pid_max; a value above any pid_max cannot exist.
	code, _, stderr := runMonitor(t, "-pid", "99999999", "-duration", "1s")
	if code != 1 || !strings.Contains(stderr, procstat.ErrExited.Error()) {
		t.Errorf("monitor -pid 99999999: exit %d, stderr %q; want 1 and %q", code, stderr, procstat.ErrExited)
	}
}

func TestMonitorUsageErrors(t *testing.T) {
	cases := [][]string{
		{},
		{"-pid", "1", "--", "true"},
		{"-pid", "-5"},
		{"-pid", "1", "-interval", "0s"},
		{"-nope"},
	}
	for _, args := range cases {
		if code, _, stderr := runMonitor(t, args...); code != 2 || !strings.Contains(stderr, "usage") {
			t.Errorf("monitor %q: exit %d, stderr %q; want 2 with usage", args, code, stderr)
		}
	}
}
