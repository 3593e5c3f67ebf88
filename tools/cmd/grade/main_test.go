package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunRejectsBadInvocations(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"unknown format", []string{"-format", "xml"}, `unknown -format "xml"`},
		{"unknown require mode", []string{"-require", "most"}, `-require "most": want all or none`},
		{"unknown chapter", []string{"-ch", "99"}, `the rubric has no chapter "99"`},
		{"stray argument", []string{"chapters/01"}, "unexpected arguments: chapters/01"},
		{"zero workers", []string{"-j", "0"}, "-timeout and -j must be positive"},
		{"missing rubric file", []string{"-rubric", "testdata/nope.json"}, "testdata/nope.json"},
		{"invalid rubric file", []string{"-rubric", "testdata/chapters/01/fixture.go"}, "decode rubric"},
		{"not a module root", []string{"-root", "testdata"}, "is not a module root"},
		{"unknown screening rule", []string{"-allow", "init,everything"}, `-allow "everything": no such rule`},
		{"negative budget", []string{"-budget", "-1s"}, "-budget must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			code := run(context.Background(), tt.args, io.Discard, &stderr)
			if code != exitError {
				t.Errorf("run(%q) exit status %d, want %d", tt.args, code, exitError)
			}
			if !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("run(%q) stderr lacks %q; it says:\n%s", tt.args, tt.stderr, stderr.String())
			}
		})
	}
}

func TestRunHelp(t *testing.T) {
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"-h"}, io.Discard, &stderr); code != exitOK {
		t.Errorf("-h exit status %d, want %d", code, exitOK)
	}
	for _, flag := range []string{"-root", "-target", "-ch", "-format", "-o", "-timeout", "-j", "-rubric", "-require", "-budget", "-course", "-allow", "-user"} {
		if !strings.Contains(stderr.String(), "  "+flag+" ") && !strings.Contains(stderr.String(), "  "+flag+"\n") {
			t.Errorf("-h does not document %s:\n%s", flag, stderr.String())
		}
	}
}

func TestSelectChapters(t *testing.T) {
	chapters, err := selectChapters("testdata/rubric.json", " 3, 01,01")
	if err != nil {
		t.Fatalf("selectChapters: %v", err)
	}
	var ids []string
	for _, ch := range chapters {
		ids = append(ids, ch.ID)
	}
	if got := strings.Join(ids, ","); got != "03,01" {
		t.Errorf("-ch \" 3, 01,01\" selects %s, want 03,01 (in the order given, once each)", got)
	}
	all, err := selectChapters("", "")
	if err != nil || len(all) == 0 {
		t.Errorf("selectChapters of the embedded rubric = %d chapters, %v; want every chapter", len(all), err)
	}
}

func TestRaceEnvKeepsCallersGORACE(t *testing.T) {
	env := raceEnv([]string{"HOME=/root", "GORACE=halt_on_error=1"})
	want := []string{"HOME=/root", "GORACE=atexit_sleep_ms=0 halt_on_error=1"}
	if strings.Join(env, "|") != strings.Join(want, "|") {
		t.Errorf("raceEnv = %q, want %q", env, want)
	}
}

// -o into something that is not a regular file (a device, a pipe) writes
// into it: renaming a temporary file over /dev/null would replace the
// device for everyone.
func TestWriteReportIntoDevice(t *testing.T) {
	before, err := os.Stat(os.DevNull)
	if err != nil {
		t.Skip("no null device")
	}
	if before.Mode().IsRegular() {
		t.Fatalf("%s is a regular file: something replaced the device", os.DevNull)
	}
	if err := writeReport(os.DevNull, io.Discard, writeJSON, sampleReport()); err != nil {
		t.Fatalf("writeReport(%s): %v", os.DevNull, err)
	}
	after, err := os.Stat(os.DevNull)
	if err != nil || after.Mode() != before.Mode() {
		t.Fatalf("%s was %v, is now %v (%v): the report replaced the device", os.DevNull, before.Mode(), after.Mode(), err)
	}
}

// -o into a file writes it whole, leaving no temporary file behind.
func TestWriteReportAtomically(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "results.json")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeReport(p, io.Discard, writeJSON, sampleReport()); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if !strings.HasPrefix(string(b), "{") {
		t.Errorf("results.json = %.40q, want the JSON report", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the directory holds %d entries, want only results.json", len(entries))
	}
}

// Without cgo the race detector cannot work: the grader says what to do
// instead of failing every chapter's build.
func TestCheckCgo(t *testing.T) {
	if msg := checkCgo(t.Context(), "../../.."); msg != "" {
		t.Skipf("this machine cannot build with -race: %s", msg)
	}
	t.Run("cgo off", func(t *testing.T) {
		t.Setenv("CGO_ENABLED", "0")
		if msg := checkCgo(t.Context(), "../../.."); !strings.Contains(msg, "needs cgo, and cgo is off") {
			t.Errorf("checkCgo = %q, want it to say cgo is off and what to do", msg)
		}
	})
	t.Run("no C compiler", func(t *testing.T) {
		t.Setenv("CC", "serverlab-no-such-cc")
		msg := checkCgo(t.Context(), "../../..")
		if !strings.Contains(msg, `"serverlab-no-such-cc" (go env CC) is not on PATH`) || !strings.Contains(msg, "apt-get install gcc") {
			t.Errorf("checkCgo = %q, want it to name the missing compiler and how to install one", msg)
		}
	})
	t.Run("a report all the same", func(t *testing.T) {
		t.Setenv("CC", "serverlab-no-such-cc")
		rep := gradeJSON(t, "-root", fixtureRoot, "-target", fixtureTarget, "-rubric", "testdata/rubric-pass.json")
		checkResults(t, rep, map[string]wantResult{"1.1": {CauseNotRun, "needs a C compiler"}})
	})
}
