package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"serverlab/tools/internal/grade"
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
			if code != grade.ExitError {
				t.Errorf("run(%q) exit status %d, want %d", tt.args, code, grade.ExitError)
			}
			if !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("run(%q) stderr lacks %q; it says:\n%s", tt.args, tt.stderr, stderr.String())
			}
		})
	}
}

func TestRunHelp(t *testing.T) {
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"-h"}, io.Discard, &stderr); code != grade.ExitOK {
		t.Errorf("-h exit status %d, want %d", code, grade.ExitOK)
	}
	for _, flag := range []string{"-root", "-target", "-ch", "-format", "-o", "-timeout", "-j", "-rubric", "-require", "-budget", "-course", "-allow", "-user"} {
		if !strings.Contains(stderr.String(), "  "+flag+" ") && !strings.Contains(stderr.String(), "  "+flag+"\n") {
			t.Errorf("-h does not document %s:\n%s", flag, stderr.String())
		}
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
	if err := writeReport(os.DevNull, io.Discard, "json", sampleReport()); err != nil {
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
	if err := writeReport(p, io.Discard, "json", sampleReport()); err != nil {
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

// Without cgo the race detector cannot work: the grader still writes a
// report, every exercise not run with the reason (tools/internal/grade's
// TestCheckCgo checks the reason itself).
func TestReportWithoutCgo(t *testing.T) {
	t.Setenv("CC", "serverlab-no-such-cc")
	rep := gradeJSON(t, "-root", fixtureRoot, "-target", fixtureTarget, "-rubric", "testdata/rubric-pass.json")
	checkResults(t, rep, map[string]wantResult{"1.1": {grade.CauseNotRun, "needs a C compiler"}})
}

// sampleReport is a small finished report.
func sampleReport() *grade.Report {
	return &grade.Report{Target: "chapters", Max: 10, Chapters: []grade.ChapterResult{{
		ID: "01", Dir: "chapters/01", Max: 10,
		Exercises: []grade.ExerciseResult{{ID: "1.1", Test: "TestEx1_1_ReadFrame", Points: 10, Max: 10, Passed: true}},
	}}}
}
