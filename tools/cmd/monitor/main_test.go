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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"serverlab/tools/internal/procstat"
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
	require.NoError(t, err, "reading CSV %q", text)
	require.NotEmpty(t, rows, "CSV %q: want the header first", text)
	require.Equal(t, procstat.CSVHeader(), rows[0], "CSV %q: the header first", text)
	return rows[1:]
}

func TestMonitorPid(t *testing.T) {
	out := filepath.Join(t.TempDir(), "self.csv")
	args := []string{"-pid", strconv.Itoa(os.Getpid()), "-interval", "20ms", "-duration", "200ms", "-o", out}
	code, _, stderr := runMonitor(t, args...)
	require.Zero(t, code, "monitor %q: exit status\n%s", args, stderr)
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	rows := parseSamples(t, string(data))
	require.NotEmpty(t, rows, "monitor %q wrote no samples", args)
	for _, row := range rows {
		rss, _ := strconv.Atoi(row[3])
		threads, _ := strconv.Atoi(row[5])
		if rss <= 0 || threads < 1 {
			t.Errorf("sample of the test process %q: want RSS > 0 and threads >= 1", row)
		}
	}
	assert.Contains(t, stderr, fmt.Sprintf("%d samples", len(rows)), "the summary")
}

// TestMonitorCommandStoppedAtDuration starts a long command; monitor must stop
// it at -duration and succeed.
func TestMonitorCommandStoppedAtDuration(t *testing.T) {
	start := time.Now()
	code, stdout, stderr := runMonitor(t, "-interval", "20ms", "-duration", "300ms", "--", "sleep", "60")
	require.Zero(t, code, "exit status\n%s", stderr)
	if elapsed := time.Since(start); elapsed > 20*time.Second {
		t.Errorf("monitor took %v: the command was not stopped at -duration", elapsed)
	}
	assert.NotEmpty(t, parseSamples(t, stdout), "samples of the command")
}

func TestMonitorCommandFailure(t *testing.T) {
	code, _, stderr := runMonitor(t, "-interval", "20ms", "--", "sh", "-c", "echo to-stdout; exit 3")
	assert.Equal(t, 1, code, "command exiting 3: monitor's exit status")
	assert.Contains(t, stderr, "exit status 3", "command exiting 3: monitor's stderr")
	// With the CSV on stdout, the command's output must go to stderr.
	assert.Contains(t, stderr, "to-stdout", "the command's stdout should be on monitor's stderr")
}

func TestMonitorNoSuchPid(t *testing.T) {
	// Pids wrap below pid_max; a value above any pid_max cannot exist.
	code, _, stderr := runMonitor(t, "-pid", "99999999", "-duration", "1s")
	assert.Equal(t, 1, code, "monitor -pid 99999999: exit status")
	assert.Contains(t, stderr, procstat.ErrExited.Error(), "monitor -pid 99999999: stderr")
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
		code, _, stderr := runMonitor(t, args...)
		assert.Equal(t, 2, code, "monitor %q: exit status", args)
		assert.Contains(t, stderr, "usage", "monitor %q: stderr", args)
	}
}
