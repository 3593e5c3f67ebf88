package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"serverlab/tools/internal/rubric"
)

// TestTodosSkipTestdata: the open track's starter in testdata/open is never
// the student's code, so next and status must not send a guided-track
// student there (student4's "next: 4.4 — chapters/04/testdata/open/server.go").
func TestTodosSkipTestdata(t *testing.T) {
	root := fixture(t, stubGo)
	open := "package open\n\n// TODO(ex 1.2): the open track's version.\nfunc Two() int { return 0 }\n"
	if err := writeFile(filepath.Join(root, "chapters", "01", "testdata", "open", "ex.go"), []byte(open)); err != nil {
		t.Fatal(err)
	}
	out, log, err := student(t, root, "next", "1.2")
	if err != nil {
		t.Fatalf("next 1.2: %v\n%s", err, log)
	}
	mustContain(t, "next 1.2", out, "chapters/01/ex.go:")
	if strings.Contains(out, "testdata") {
		t.Errorf("next 1.2 names a file under testdata/, which is not the student's code; got:\n%s", out)
	}
}

// TestTestCommandHasRace: the command the tools print is the grader's run,
// -race included, else a racy solution passes it and scores 0 in make grade.
func TestTestCommandHasRace(t *testing.T) {
	ch := rubric.Chapter{ID: "04"}
	ex := rubric.Exercise{ID: "4.4"}
	if got := (&course{race: true}).testCommand(ch, ex); !strings.Contains(got, " -race ") {
		t.Errorf("with race on, testCommand = %q, want -race in it (make grade runs under -race)", got)
	}
	if got := (&course{race: false}).testCommand(ch, ex); strings.Contains(got, "-race") {
		t.Errorf("with race off, testCommand = %q, want no -race (the tools ran without it)", got)
	}
}

// TestLastRunShowsTheFailure: a failed run whose first twelve lines are
// passing subtests still shows its failure (student4's 8.1: twelve --- PASS
// lines, then the cut).
func TestLastRunShowsTheFailure(t *testing.T) {
	var out []string
	for i := range 13 {
		out = append(out, fmt.Sprintf("    --- PASS: TestEx8_1_DurableEcho/sub%d (0.10s)", i))
	}
	out = append(out, "    --- FAIL: TestEx8_1_DurableEcho/restart (1.00s)", "        sent x; want y; got z (exercise 8.1)")
	got := strings.Join(lastRunLines(out, 12), "\n")
	for _, want := range []string{"--- FAIL: TestEx8_1_DurableEcho/restart", "sent x; want y; got z", "13 subtests passed"} {
		if !strings.Contains(got, want) {
			t.Errorf("last run lacks %q; got:\n%s", want, got)
		}
	}
	if strings.Contains(got, "--- PASS") {
		t.Errorf("last run shows --- PASS lines above the failure; got:\n%s", got)
	}
}
