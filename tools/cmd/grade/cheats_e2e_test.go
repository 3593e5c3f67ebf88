package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"serverlab/tools/internal/coursesum"
	"serverlab/tools/internal/grade"
)

// gradeJSON runs the grader in process with -format json and returns the
// report.
func gradeJSON(t *testing.T, args ...string) *grade.Report {
	t.Helper()
	skipIfShort(t)
	out := filepath.Join(t.TempDir(), "report.json")
	var stderr bytes.Buffer
	args = append([]string{"-q", "-format", "json", "-o", out}, args...)
	if code := run(t.Context(), args, io.Discard, &stderr); code == grade.ExitError {
		t.Fatalf("grade %q: exit status %d; stderr:\n%s", args, code, stderr.String())
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("the -o report: %v", err)
	}
	var rep grade.Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("the json report does not parse: %v\n%s", err, raw)
	}
	return &rep
}

type wantResult struct {
	cause   grade.Cause
	message string // a substring of the message
}

// checkResults compares every exercise of rep with want (by exercise id).
func checkResults(t *testing.T, rep *grade.Report, want map[string]wantResult) {
	t.Helper()
	seen := 0
	rep.Exercises(func(ch grade.ChapterResult, ex grade.ExerciseResult) {
		w, ok := want[ex.ID]
		if !ok {
			return
		}
		seen++
		wantPoints := 0
		if w.cause == "" {
			wantPoints = ex.Max
		}
		if ex.Cause != w.cause || ex.Points != wantPoints {
			t.Errorf("exercise %s: cause %q, %d/%d points; want cause %q, %d points\nmessage:\n%s",
				ex.ID, ex.Cause, ex.Points, ex.Max, w.cause, wantPoints, ex.Message)
		}
		if !strings.Contains(ex.Message, w.message) {
			t.Errorf("exercise %s message lacks %q; it is:\n%s", ex.ID, w.message, ex.Message)
		}
	})
	if seen != len(want) {
		t.Errorf("the report has %d of the %d exercises expected", seen, len(want))
	}
}

// TestGradeCheats grades fixture chapters that each try a way of earning
// points without doing the work that the gate refuses, naming what it found
// and where: a linkname into testkit, and (fixture 07 is held to chapter
// 07's allow-list) an import of given code the chapter does not use.
func TestGradeCheats(t *testing.T) {
	t.Parallel()
	rep := gradeJSON(t, "-root", fixtureRoot, "-target", fixtureTarget, "-rubric", "testdata/rubric-cheats.json", "-ch", "06,07")
	refused := `tools/cmd/grade/testdata/chapters/07/codec.go:8: chapter 07's code may not import "serverlab/tools/given/wire"`
	checkResults(t, rep, map[string]wantResult{
		"6.1": {grade.CauseIntegrity, "tools/cmd/grade/testdata/chapters/06/linkname.go:11: chapter 06 needs no //go:linkname"},
		"7.1": {grade.CauseIntegrity, refused},
		"7.2": {grade.CauseIntegrity, refused},
	})
}

// TestGradeCheatsPastScreening grades the cheats the gate only names (its
// notes cost nothing), to prove the runtime defences on their own. What the
// judge drives cannot forge a pass: a forged "--- PASS" from an init is only
// the subject's output, and exiting in the middle of a test is cause
// "exited", read from the subject's exit status; the honest exercise beside
// them keeps its points.
func TestGradeCheatsPastScreening(t *testing.T) {
	t.Parallel()
	rep := gradeJSON(t, "-root", fixtureRoot, "-target", fixtureTarget, "-rubric", "testdata/rubric-cheats.json",
		"-ch", "04,05")
	checkResults(t, rep, map[string]wantResult{
		"4.1": {grade.CauseExited, "ended its process (exit status 0) while TestEx4_1_Fake was running"},
		"5.1": {grade.CauseExited, "ended its process (exit status 0) while TestEx5_1_ExitZero was running"},
		"5.2": {grade.CauseExited, "ended its process (exit status 3) while TestEx5_2_ExitThree was running"},
		"5.3": {"", ""},
	})
	for _, ch := range rep.Chapters {
		if ch.ID == "04" && !strings.Contains(strings.Join(ch.Integrity, "\n"), "tools/cmd/grade/testdata/chapters/04/fake.go:12") {
			t.Errorf("chapter 04's notes do not name the init at fake.go:12: %q", ch.Integrity)
		}
	}
}

// tamperedCourse writes a module root holding only go.mod, go.sum and
// fixture chapter 08 with its course files tampered with: the wiring test's
// body emptied, a test file added, a file added to testkit whose init forges
// a pass. Everything else of the course is missing.
func tamperedCourse(t *testing.T) string {
	t.Helper()
	root := readableTempDir(t)
	// The course's directories exist (go vet, which go test -c runs, works
	// in them); their files do not.
	course := theCourse(t)
	for f := range course {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(filepath.FromSlash(f))), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(rel, content string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(coursesum.Path, coursesum.Format(course)) // as the release carries it
	for _, f := range []string{"go.mod", "go.sum", "tools/cmd/grade/testdata/chapters/08/stub.go"} {
		b, err := os.ReadFile(filepath.Join(fixtureRoot, f))
		if err != nil {
			t.Fatal(err)
		}
		write(f, string(b))
	}
	const ch = "tools/cmd/grade/testdata/chapters/08/"
	write(ch+"stub_test.go", `package stub

import (
	"testing"

	"serverlab/tests/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func TestEx8_1_Answer(t *testing.T) { testkit.New(t, "8.1") }
`)
	write(ch+"added_test.go", `package stub

import (
	"testing"

	"serverlab/tests/testkit"
)

func TestEx8_2_Added(t *testing.T) { testkit.New(t, "8.2") }
`)
	write("tests/testkit/zz_forge.go", `package testkit

import "os"

func init() { println("--- PASS: TestEx8_1_Answer (0.00s)"); os.Exit(0) }
`)
	return root
}

// TestGradeTamperedCourseFiles grades a checkout whose course files were
// tampered with: the grader builds with the course's copies (here from a
// clean course directory, -course), leaves the foreign files out, and says
// so; the emptied test earns nothing.
func TestGradeTamperedCourseFiles(t *testing.T) {
	t.Parallel()
	course, err := filepath.Abs(fixtureRoot)
	if err != nil {
		t.Fatal(err)
	}
	root := tamperedCourse(t)
	rep := gradeJSON(t, "-root", root, "-course", course, "-target", fixtureTarget,
		"-rubric", "testdata/rubric-cheats.json", "-ch", "08")
	checkResults(t, rep, map[string]wantResult{
		"8.1": {grade.CauseFailed, "Answer() = 0, ex 8.1: Answer: not implemented; want 42"},
		"8.2": {grade.CauseNotRun, "TestEx8_2_Added is not in the chapter's test binary"},
	})
	notes := strings.Join(rep.Notes, "\n")
	for _, want := range []string{
		"tools/cmd/grade/testdata/chapters/08/stub_test.go differs from the course's copy: built with the course's copy",
		"tools/cmd/grade/testdata/chapters/08/added_test.go is not one of the course's test files: left out of the build",
		"tests/testkit/zz_forge.go is not one of the course's files: left out of the build",
		"tests/testkit/testkit.go is missing: built with the course's copy",
		// Deleting the judge's wiring does not switch the judge off.
		"tools/cmd/grade/testdata/chapters/08/judge_test.go is missing: built with the course's copy",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("the report's notes lack %q; they are:\n%s", want, notes)
		}
	}

	// Without a copy of the course to restore from (a student release has
	// no git history), nothing is graded, and the report says what to do.
	rep = gradeJSON(t, "-root", root, "-target", fixtureTarget, "-rubric", "testdata/rubric-cheats.json", "-ch", "08")
	checkResults(t, rep, map[string]wantResult{
		"8.1": {grade.CauseIntegrity, "the course's copy is not available here"},
		"8.2": {grade.CauseIntegrity, "the course's copy is not available here"},
	})
}

// TestGradeTimeoutShowsStudentFrames: when the watchdog fires, its message
// shows where the student's code is blocked, and nothing of the suite's.
func TestGradeTimeoutShowsStudentFrames(t *testing.T) {
	t.Parallel()
	rep := gradeJSON(t, "-root", fixtureRoot, "-target", fixtureTarget, "-rubric", "testdata/rubric-cheats.json", "-ch", "10")
	checkResults(t, rep, map[string]wantResult{
		"10.1": {grade.CauseTimeout, "Where your code is blocked:"},
	})
	rep.Exercises(func(_ grade.ChapterResult, ex grade.ExerciseResult) {
		if !strings.Contains(ex.Message, "tools/cmd/grade/testdata/chapters/10/stuck.go:9") ||
			strings.Contains(ex.Message, "testing.tRunner") || strings.Contains(ex.Message, "stuck_test.go") {
			t.Errorf("exercise 10.1's message should show stuck.go:9 and no suite frames:\n%s", ex.Message)
		}
	})
}

// TestGradeBudgetExhausted gives the grader no time at all: every exercise
// is "not run" with the budget as its reason, and the report is still
// written in full.
func TestGradeBudgetExhausted(t *testing.T) {
	rep := gradeJSON(t, "-root", fixtureRoot, "-target", fixtureTarget, "-rubric", "testdata/rubric-pass.json", "-budget", "1ns")
	checkResults(t, rep, map[string]wantResult{
		"1.1": {grade.CauseNotRun, "the grading budget (-budget 1ns) ran out before the chapter was built"},
	})
	if rep.Max != 10 {
		t.Errorf("max %d, want 10: the report must be complete", rep.Max)
	}
}

// cleanCopy writes a module root with every course file (as theCourse lists
// them), their list in course.sum, and fixture chapter 08's own file, but no
// git history: a student release.
func cleanCopy(t *testing.T) string {
	t.Helper()
	root := readableTempDir(t)
	files := []string{"tools/cmd/grade/testdata/chapters/08/stub.go"}
	for f := range theCourse(t) {
		files = append(files, f)
	}
	listed := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(fixtureRoot, filepath.FromSlash(f)))
		if err != nil {
			continue // solutions/ in a student release
		}
		p := filepath.Join(root, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if coursesum.IsCourseFile(f) {
			listed[f] = coursesum.BlobID(b) // the copy as it is, committed or not
		}
	}
	sum := filepath.Join(root, filepath.FromSlash(coursesum.Path))
	if err := os.MkdirAll(filepath.Dir(sum), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sum, []byte(coursesum.Format(listed)), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// theCourse lists the course's files as the grader finds them in the course
// these tests run in: git HEAD in the maintainers' tree, course.sum in the
// student release.
func theCourse(t *testing.T) map[string]string {
	t.Helper()
	root, err := filepath.Abs(fixtureRoot)
	if err != nil {
		t.Fatal(err)
	}
	files, from := grade.CourseList(root, false)
	if len(files) < 10 {
		// Seen once in make test under load, without git's words: ask
		// again, and keep the first answer for the log.
		t.Logf("the grader found %d course files in %s the first time (%s); asking again", len(files), root, from)
		files, from = grade.CourseList(root, false)
	}
	if len(files) < 10 {
		t.Fatalf("the grader finds %d course files in %s: no %s, and %s", len(files), root, coursesum.Path, from)
	}
	return files
}

// TestGradeUnrestorableCourseFile: in a checkout without git history, a
// course file that differs and cannot be restored costs only the chapters
// whose tests use its package; the others are graded, with a note.
func TestGradeUnrestorableCourseFile(t *testing.T) {
	t.Parallel()
	root := cleanCopy(t)
	appendTo := func(rel string) {
		f, err := os.OpenFile(filepath.Join(root, filepath.FromSlash(rel)), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		_, _ = f.WriteString("\n// edited by the student\n")
	}
	appendTo("tools/cmd/loadgen/main.go") // a tool chapter 08's tests do not use
	args := []string{"-root", root, "-target", fixtureTarget, "-rubric", "testdata/rubric-cheats.json", "-ch", "08"}
	rep := gradeJSON(t, args...)
	checkResults(t, rep, map[string]wantResult{
		"8.1": {grade.CauseFailed, "Answer() = 0, ex 8.1: Answer: not implemented; want 42"},
	})
	if notes := strings.Join(rep.Notes, "\n"); !strings.Contains(notes, "tools/cmd/loadgen/main.go differs from the course's copy, which is not available here; tools/cmd/grade/testdata/chapters/08's tests do not use it") {
		t.Errorf("the notes do not mention the edited tool:\n%s", notes)
	}

	appendTo("tests/testkit/testkit.go") // one they do use
	rep = gradeJSON(t, args...)
	checkResults(t, rep, map[string]wantResult{
		"8.1": {grade.CauseIntegrity, "tests/testkit/testkit.go differs from the course's copy, and the course's copy is not available here"},
	})
}

// readableTempDir is t.TempDir, readable by every user: a grader running as
// root runs the students' code as nobody, in the chapter's folder.
func readableTempDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
