package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestGradeKillsEscapedProcesses grades a fixture whose test starts a
// process in a new session, outside its process group, and passes. The
// grader, a child subreaper, must have killed it by the time it returns.
func TestGradeKillsEscapedProcesses(t *testing.T) {
	marker := strconv.Itoa(700000 + os.Getpid()%100000) // a sleep nobody else runs
	t.Setenv("SERVERLAB_ESCAPE_MARKER", marker)
	rep := gradeJSON(t, "-root", fixtureRoot, "-target", fixtureTarget, "-rubric", "testdata/rubric-cheats.json", "-ch", "09")
	checkResults(t, rep, map[string]wantResult{"9.1": {"", ""}})
	deadline := time.Now().Add(2 * time.Second) // SIGKILL is prompt, /proc a moment behind
	for {
		pids := sleepers(marker)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes %v (sleep %s) outlived grading: the grader must kill every descendant", pids, marker)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sleepers are the live processes whose command line ends in "sleep
// <marker>" (setsid's too, before it has become the sleep).
func sleepers(marker string) []string {
	var out []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(d + "/cmdline")
		if err != nil {
			continue
		}
		if strings.HasSuffix(strings.Join(strings.Split(strings.TrimRight(string(b), "\x00"), "\x00"), " "), "sleep "+marker) {
			if stat, err := os.ReadFile(d + "/stat"); err == nil && !strings.Contains(string(stat), ") Z ") {
				out = append(out, filepath.Base(d))
			}
		}
	}
	return out
}
