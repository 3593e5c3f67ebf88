package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"serverlab/tools/internal/grade"
)

// The fixture course: testdata/chapters, graded from the module root. Its
// tests are built by path (testdata is left out of ./..., not out of the
// module), exactly as the grader builds a real chapter.
const (
	fixtureRoot   = "../../.."
	fixtureTarget = "tools/cmd/grade/testdata/chapters"
)

// gradeFixture runs the grader in process, as `go run ./tools/cmd/grade` would,
// and returns its exit status and stderr.
func gradeFixture(t *testing.T, stdout io.Writer, args ...string) (int, string) {
	t.Helper()
	skipIfShort(t)
	var stderr bytes.Buffer
	args = append([]string{"-root", fixtureRoot, "-target", fixtureTarget, "-q"}, args...)
	code := run(t.Context(), args, stdout, &stderr)
	return code, stderr.String()
}

// TestGradeFixtures grades a fixture chapter whose tests pass, fail, panic
// (in the test and in a goroutine it started), hang, leak (by the course's
// marker and by goleak's own message), race, trip the watchdog and skip; a
// chapter that does not compile; a rubric entry with no test; and a chapter
// that is not there. Every exercise must get exactly its cause and points.
func TestGradeFixtures(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "report.json")
	code, stderr := gradeFixture(t, io.Discard,
		"-rubric", "testdata/rubric.json", "-format", "json", "-o", out, "-require", "none")
	if code != grade.ExitRequirement {
		t.Fatalf("exit status %d, want %d (-require none must fail: some exercises pass or crash); stderr:\n%s", code, grade.ExitRequirement, stderr)
	}
	for _, want := range []string{"-require none", "1.1 (passed)", "1.3 (panic)", "1.4 (timeout)", "2.1 (build error)"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q; it says:\n%s", want, stderr)
		}
	}

	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("the -o report: %v", err)
	}
	var rep grade.Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("the json report does not parse: %v\n%s", err, raw)
	}

	want := map[string]struct {
		cause   grade.Cause
		message string // a substring of the message
	}{
		"1.1":  {"", ""},
		"1.2":  {grade.CauseFailed, `Whisper("HI"): ex 1.2: Whisper: not implemented`},
		"1.3":  {grade.CausePanic, "panic: server goroutine: nil map"},
		"1.4":  {grade.CauseTimeout, "the test did not finish within its "}, // 2s, longer on a busy machine
		"1.5":  {grade.CauseLeak, "serverlab: leak: found unexpected goroutines"},
		"1.6":  {grade.CauseLeak, "goleak: Errors on successful test run: found unexpected goroutines"},
		"1.7":  {grade.CauseRace, "the race detector found a data race in the student's code while TestEx1_7_Race was running"},
		"1.8":  {grade.CausePanic, "panic: assignment to entry in nil map"},
		"1.9":  {grade.CauseTimeout, "serverlab: watchdog: check 1.9"},
		"1.10": {grade.CauseNotRun, "needs a network this machine does not have"},
		"1.11": {grade.CauseNotRun, "TestEx1_11_Missing is not in the chapter's test binary"},
		"2.1":  {grade.CauseBuildError, `cannot use "forty-two"`},
		"2.2":  {grade.CauseBuildError, `cannot use "forty-two"`},
		"3.1":  {grade.CauseBuildError, "tools/cmd/grade/testdata/chapters/03 does not exist"},
	}
	seen := 0
	rep.Exercises(func(ch grade.ChapterResult, ex grade.ExerciseResult) {
		seen++
		w, ok := want[ex.ID]
		if !ok {
			t.Errorf("unexpected exercise %s in the report", ex.ID)
			return
		}
		wantPoints := 0
		if w.cause == "" {
			wantPoints = ex.Max
		}
		if ex.Cause != w.cause || ex.Points != wantPoints || ex.Passed != (w.cause == "") {
			t.Errorf("exercise %s: cause %q, %d/%d points, passed %v; want cause %q, %d points\nmessage:\n%s",
				ex.ID, ex.Cause, ex.Points, ex.Max, ex.Passed, w.cause, wantPoints, ex.Message)
		}
		if !strings.Contains(ex.Message, w.message) {
			t.Errorf("exercise %s message lacks %q; it is:\n%s", ex.ID, w.message, ex.Message)
		}
		if abs, _ := filepath.Abs(fixtureRoot); strings.Contains(ex.Message, abs+string(filepath.Separator)) {
			t.Errorf("exercise %s message shows absolute paths; want them relative to the module root:\n%s", ex.ID, ex.Message)
		}
	})
	if seen != len(want) {
		t.Errorf("the report has %d exercises, want %d", seen, len(want))
	}
	if rep.Points != 10 || rep.Max != 165 {
		t.Errorf("total %d/%d, want 10/165", rep.Points, rep.Max)
	}
	if ch := rep.Chapters[1]; ch.Max != 50 || ch.BuildError == "" {
		t.Errorf("chapter 02: max %d, build error %q; want 50 and the compiler's message", ch.Max, ch.BuildError)
	}
	if ex := rep.Chapters[0].Exercises[0]; ex.File != "tools/cmd/grade/testdata/chapters/01/fixture_test.go" || ex.Line == 0 {
		t.Errorf("exercise 1.1 is at %s:%d, want its line in tools/cmd/grade/testdata/chapters/01/fixture_test.go", ex.File, ex.Line)
	}
}

// TestGradeRequireOnFixtures checks -require end to end: "all" holds on
// passing exercises, "none" on untouched stubs, and each fails the other way
// round, saying why.
func TestGradeRequireOnFixtures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, rubric, require string
		code                  int
		stderr                string
	}{
		{"all passed", "testdata/rubric-pass.json", "all", grade.ExitOK, ""},
		{"none passed", "testdata/rubric-stubs.json", "none", grade.ExitOK, ""},
		{"all required but a stub fails", "testdata/rubric-stubs.json", "all", grade.ExitRequirement, "-require all: 1 exercise(s) did not pass: 1.2 (failed)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout bytes.Buffer
			code, stderr := gradeFixture(t, &stdout, "-rubric", tt.rubric, "-require", tt.require, "-ch", "01")
			if code != tt.code {
				t.Errorf("exit status %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			if tt.stderr != "" && !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr lacks %q; it says:\n%s", tt.stderr, stderr)
			}
			if !strings.Contains(stdout.String(), "Total: ") {
				t.Errorf("no text report on stdout:\n%s", stdout.String())
			}
		})
	}
}

// skipIfShort skips a test that grades fixture chapters end to end: -short
// (make release-check, which grades the release itself) leaves them to make
// unit.
func skipIfShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("grades fixture chapters end to end (make unit runs it; -short does not)")
	}
}
