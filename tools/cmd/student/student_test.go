package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"serverlab/tools/internal/coursesum"
	"serverlab/tools/internal/rubric"
)

// The fixture is a course of its own with a tiny chapter 01 (the rubric's
// real chapter 01, whose six tests check two one-line functions), so that
// each go test it runs compiles in about a second.

const stubGo = `package discovery

// One returns 1.
func One() int {
	// TODO(ex 1.1): return 1.
	return 0
}

// Two returns 2.
func Two() int {
	// TODO(ex 1.2): return 2,
	// the number after 1.
	return 0
}
`

const solvedOne = `package discovery

import "strconv"

// One returns 1.
func One() int {
	n, _ := strconv.Atoi("1")
	return n
}

// helper is the student's own; reset must keep it.
func helper() int { return 7 }

// Two returns 2.
func Two() int {
	// TODO(ex 1.2): return 2,
	// the number after 1.
	return 0
}
`

const fixtureTests = `package discovery

import "testing"

func TestEx1_1_ReadFrame(t *testing.T) {
	if One() != 1 {
		t.Fatalf("One() = %d, want 1", One())
	}
}

func TestEx1_2_WriteFrame(t *testing.T) {
	if Two() != 2 {
		t.Fatalf("Two() = %d, want 2 (exercise 1.2)", Two())
	}
}

func TestEx1_3_UserStore(t *testing.T) { t.Fatal("not yet") }
func TestEx1_4_Serve(t *testing.T)     { t.Fatal("not yet") }
func TestEx1_5_Deadlines(t *testing.T) { t.Fatal("not yet") }
func TestEx1_6_Close(t *testing.T)     { t.Fatal("not yet") }
`

const fixtureLesson = "# Chapter 01\n\n### Hints\n\n- **1.1 One.** Return one.\n- **1.2 Two.** Return two, which is\n  one more than one.\n\n## Run it\n"

// fixture writes a course with chapter 01 in the state ex.go says and
// returns its root. It also points the cache at a fresh folder.
func fixture(t *testing.T, exGo string) string {
	t.Helper()
	root := t.TempDir()
	t.Setenv("SERVERLAB_CACHE_DIR", filepath.Join(t.TempDir(), "cache"))
	files := map[string]string{
		"go.mod":                     "module serverlab\n\ngo 1.26\n",
		"chapters/01/ex.go":          exGo,
		"chapters/01/ex_test.go":     fixtureTests,
		"chapters/01/README.md":      fixtureLesson,
		".starter/chapters/01/ex.go": stubGo,
	}
	for name, content := range files {
		if err := writeFile(filepath.Join(root, filepath.FromSlash(name)), []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// student runs one command against root and returns its output.
func student(t *testing.T, root string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd, rest := args[0], args[1:]
	full := append([]string{cmd, "-root", root, "-race=false"}, rest...)
	err = run(context.Background(), full, &out, &errb)
	return out.String(), errb.String(), err
}

func mustContain(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q; got:\n%s", what, w, got)
		}
	}
}

// chapter01 is what the embedded rubric says of chapter 01, the fixture's:
// its number of exercises and the points of 1.1 and of 1.1 with 1.2, so
// that a new exercise or new points do not break the tests of status.
func chapter01(t *testing.T) (exercises int, first, firstTwo string) {
	t.Helper()
	r, err := rubric.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range r.Chapters {
		if ch.ID == "01" {
			p1, p2 := ch.Exercises[0].Points, ch.Exercises[1].Points
			return len(ch.Exercises), fmt.Sprintf("%d/%d", p1, ch.MaxPoints()), fmt.Sprintf("%d/%d", p1+p2, ch.MaxPoints())
		}
	}
	t.Fatal("the rubric has no chapter 01")
	return
}

func TestStatus(t *testing.T) {
	n, first, firstTwo := chapter01(t)
	root := fixture(t, solvedOne)
	out, log, err := student(t, root, "status")
	if err != nil {
		t.Fatalf("status: %v\n%s", err, log)
	}
	mustContain(t, "status", out,
		"01  Iterative discovery server", first, fmt.Sprintf("1 of %d", n),
		"02  Goroutine-per-client chat server", "not in this checkout",
		"total", strings.SplitAfter(first, "/")[0],
		"next: 1.2 — chapters/01/ex.go:16 — go test -fullpath ./chapters/01/... -run Ex1_2_")
	mustContain(t, "status's notes", log, "running the tests of chapter 01")

	// Nothing changed: the results are reused, nothing runs.
	out2, log2, err := student(t, root, "status")
	if err != nil {
		t.Fatal(err)
	}
	if out2 != out || strings.Contains(log2, "running") {
		t.Errorf("second status with nothing changed: ran the tests again or differed:\n%s\n%s", log2, out2)
	}

	// Solve 1.2: chapter 01 runs again and the next exercise moves on.
	solved := strings.Replace(solvedOne, "\treturn 0\n}\n", "\treturn 2\n}\n", 1)
	if err := os.WriteFile(filepath.Join(root, "chapters/01/ex.go"), []byte(solved), 0o644); err != nil {
		t.Fatal(err)
	}
	out3, log3, err := student(t, root, "status")
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "status after solving 1.2", out3, firstTwo, fmt.Sprintf("2 of %d", n), "next: 1.3 — chapters/01/README.md —")
	mustContain(t, "status's notes after a change", log3, "running the tests of chapter 01")
}

func TestStatusBuildError(t *testing.T) {
	n, _, _ := chapter01(t)
	root := fixture(t, stubGo+"\nfunc broken() int { return \"x\" }\n")
	out, _, err := student(t, root, "status")
	if err != nil {
		t.Fatalf("status: %v", err)
	}
	mustContain(t, "status of a chapter that does not build", out, "0/100", fmt.Sprintf("0 of %d", n), "next: 1.1")
	c, _ := openCourse(root)
	if r := c.loadResults("01").Results["1.1"]; r.Cause != "build error" || !strings.Contains(strings.Join(r.Output, "\n"), "ex.go") {
		t.Errorf("exercise 1.1 of a chapter that does not build: %+v; want cause build error and the compiler's message", r)
	}
}

func TestNext(t *testing.T) {
	root := fixture(t, solvedOne)
	out, log, err := student(t, root, "next")
	if err != nil {
		t.Fatalf("next: %v\n%s", err, log)
	}
	mustContain(t, "next", out,
		"next: 1.2 Write one frame (15 points)",
		"go test -fullpath ./chapters/01/... -run Ex1_2_",
		"- **1.2 Two.** Return two, which is", "one more than one.",
		"chapters/01/ex.go:16", "return 2,", "the number after 1.",
		"Last run: failed", "Two() = 0, want 2",
		"make hint EX=1.2")
	if strings.Contains(out, "Return one") {
		t.Errorf("next shows the lesson of 1.1 too:\n%s", out)
	}
}

func TestHint(t *testing.T) {
	root := fixture(t, stubGo)
	c, err := openCourse(root)
	if err != nil {
		t.Fatal(err)
	}
	_, ex, err := c.findExercise("3.4")
	if err != nil {
		t.Fatal(err)
	}
	all := len(ex.Hints)
	for n := 1; n <= all+1; n++ {
		out, _, err := student(t, root, "hint", "3_4")
		if err != nil {
			t.Fatalf("hint %d: %v", n, err)
		}
		shown := min(n, all)
		for i, h := range ex.Hints {
			first, _, _ := strings.Cut(h, "\n") // a recipe's lines are indented one by one
			if got := strings.Contains(out, first); got != (i < shown) {
				t.Errorf("hint call %d: hint %d shown = %v, want %v:\n%s", n, i+1, got, i < shown, out)
			}
		}
		if shown < all {
			mustContain(t, "hint", out, "again shows "+rubric.HintKinds[shown])
		} else {
			mustContain(t, "last hint", out, "That was the last hint")
		}
	}
	if out, log, err := student(t, root, "hint"); err != nil || !strings.Contains(out, "Exercise 1.1 ") {
		t.Errorf("hint without an exercise: err = %v, output:\n%s\n%s\nwant the hints of 1.1, the exercise next names", err, out, log)
	}
	if _, _, err := student(t, root, "hint", "9.9"); err == nil || !strings.Contains(err.Error(), "01: 1.1 1.2 1.3") {
		t.Errorf("hint 9.9: err = %v; want an error listing the exercises", err)
	}
}

// TestHintOpenTrack: on the open track the recipe, which names the guided
// starter's types and functions, is not shown; the idea, the pitfall and the
// API are.
func TestHintOpenTrack(t *testing.T) {
	root := fixture(t, stubGo)
	if err := writeFile(filepath.Join(root, "chapters/03", trackFile), []byte(trackOpen+"\n")); err != nil {
		t.Fatal(err)
	}
	c, err := openCourse(root)
	if err != nil {
		t.Fatal(err)
	}
	_, ex, err := c.findExercise("3.4")
	if err != nil {
		t.Fatal(err)
	}
	var out string
	for range ex.Hints {
		if out, _, err = student(t, root, "hint", "3.4"); err != nil {
			t.Fatal(err)
		}
	}
	recipe := ex.Hints[len(ex.Hints)-1]
	for _, guided := range []string{"newClientConn", "clientConn", "c.waitRoom", "c.lingerOnClose"} {
		if strings.Contains(recipe, guided) && strings.Contains(out, guided) {
			t.Errorf("open track: the hints show the guided-only name %s:\n%s", guided, out)
		}
	}
	first, _, _ := strings.Cut(recipe, "\n")
	if strings.Contains(out, first) {
		t.Errorf("open track: the recipe is shown:\n%s", out)
	}
	mustContain(t, "open-track hint", out, ex.Hints[0], "the open track", "Design it yourself", "That was the last hint")
}

// TestHintCountsPerCheckout: two checkouts sharing a cache directory count
// their hints apart, as they keep their results apart.
func TestHintCountsPerCheckout(t *testing.T) {
	a := fixture(t, stubGo)
	b := fixture(t, stubGo)
	t.Setenv("SERVERLAB_CACHE_DIR", filepath.Join(t.TempDir(), "shared"))
	for range 2 {
		if _, _, err := student(t, a, "hint", "1.1"); err != nil {
			t.Fatal(err)
		}
	}
	out, _, err := student(t, b, "hint", "1.1")
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "a fresh checkout's first hint", out, "hint 1 of", "again shows "+rubric.HintKinds[1])
	if strings.Contains(out, "hint 2 of") {
		t.Errorf("a second checkout starts at the hints the first was shown:\n%s", out)
	}
}

func TestResetFromPristineCopy(t *testing.T) {
	root := fixture(t, solvedOne)
	out, _, err := student(t, root, "reset", "1.1")
	if err != nil {
		t.Fatalf("reset: %v", err)
	}
	mustContain(t, "reset", out, "chapters/01/ex.go: restored One", ".starter/", "your version is saved in .backup/")
	got, _ := os.ReadFile(filepath.Join(root, "chapters/01/ex.go"))
	for _, want := range []string{"// TODO(ex 1.1): return 1.", "func helper() int { return 7 }"} {
		if !bytes.Contains(got, []byte(want)) {
			t.Errorf("after reset, ex.go lacks %q:\n%s", want, got)
		}
	}
	if bytes.Contains(got, []byte("strconv")) {
		t.Errorf("after reset, ex.go still imports strconv, which only the solution used:\n%s", got)
	}
	backups, _ := filepath.Glob(filepath.Join(root, ".backup", "*-ex1.1", "chapters", "01", "ex.go"))
	if len(backups) != 1 {
		t.Fatalf("backups = %v; want one copy of ex.go", backups)
	}
	if b, _ := os.ReadFile(backups[0]); string(b) != solvedOne {
		t.Errorf("the backup is not the student's version:\n%s", b)
	}
	vet := exec.Command("go", "vet", "./chapters/01/")
	vet.Dir = root
	if out, err := vet.CombinedOutput(); err != nil {
		t.Errorf("the reset chapter does not build: %v\n%s", err, out)
	}
	out, _, err = student(t, root, "reset", "1.1")
	if err != nil || !strings.Contains(out, "already as in the starter") {
		t.Errorf("second reset: %v\n%s", err, out)
	}
}

func TestResetFromGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := fixture(t, stubGo)
	os.RemoveAll(filepath.Join(root, starterDir))
	gitIn := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=s", "-c", "user.email=s@x", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	gitIn("init", "-q")
	gitIn("add", ".")
	gitIn("commit", "-qm", "starter")
	// The student commits a solution: HEAD no longer has the TODO.
	os.WriteFile(filepath.Join(root, "chapters/01/ex.go"), []byte(solvedOne), 0o644)
	gitIn("commit", "-qam", "solved 1.1")
	out, _, err := student(t, root, "reset", "1.1")
	if err != nil {
		t.Fatalf("reset: %v", err)
	}
	mustContain(t, "reset from git", out, "restored One", "git commit")
	if got, _ := os.ReadFile(filepath.Join(root, "chapters/01/ex.go")); !bytes.Contains(got, []byte("TODO(ex 1.1)")) {
		t.Errorf("reset did not restore the stub from the commit before the solution:\n%s", got)
	}
}

func TestBadChapterOrExercise(t *testing.T) {
	root := fixture(t, stubGo)
	c, err := openCourse(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ ch, ex, want string }{
		{"1", "13", "its exercises are: 1_1 1_2 1_3 1_4 1_5 1_6"},
		{"01", "2_1", "chapter 01 has no exercise"},
		{"9", "", "unknown chapter \"09\"; the chapters are:\n  01  Iterative discovery server"},
		{"", "", "usage: make watch CH=NN"},
	} {
		_, _, err := c.watchTarget(tc.ch, tc.ex)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("watch CH=%q EX=%q: err = %v; want one containing %q", tc.ch, tc.ex, err, tc.want)
		}
	}
	if ch, ex, err := c.watchTarget("1", "1.2"); err != nil || ch.ID != "01" || ex.ID != "1.2" {
		t.Errorf("watch CH=1 EX=1.2 = %v, %v, %v; want chapter 01, exercise 1.2", ch.ID, ex, err)
	}
}

// syncBuffer is an output both the watcher and the test read.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestWatchRenameOnSave(t *testing.T) {
	for _, poll := range []bool{false, true} {
		name := "fsnotify"
		if poll {
			name = "poll"
		}
		t.Run(name, func(t *testing.T) { testWatch(t, poll) })
	}
}

func testWatch(t *testing.T, poll bool) {
	root := fixture(t, stubGo)
	c, err := openCourse(root)
	if err != nil {
		t.Fatal(err)
	}
	c.race = false
	runs := make(chan map[string]result, 4)
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- c.watch(ctx, watchConfig{Chapter: "01", Exercise: "1_2", Poll: poll, Out: out,
			debounce: 50 * time.Millisecond, interval: 50 * time.Millisecond,
			onRun: func(r map[string]result) { runs <- r }})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("watch: %v", err)
		}
	})
	wait := func(what string) map[string]result {
		t.Helper()
		select {
		case r := <-runs:
			return r
		case err := <-done:
			done <- err
			t.Fatalf("watch ended before %s: %v\n%s", what, err, out)
		case <-time.After(90 * time.Second):
			t.Fatalf("no run after %s within 90 s:\n%s", what, out)
		}
		return nil
	}
	first := wait("starting")
	if len(first) != 1 || first["1.2"].Pass {
		t.Fatalf("first run = %v; want exercise 1.2 alone, failing", first)
	}
	mustContain(t, "watch output", out.String(), "FAIL 1.2", "first failure, 1.2:", "Two() = 0, want 2",
		"chapter 01: exercise 1.2 does not pass yet (failed)")
	if strings.Contains(out.String(), "points") {
		t.Errorf("watch EX=1_2, which ran 1.2 alone, claims points it does not know (student3: \"0/100 points known\"):\n%s", out)
	}
	if strings.Contains(out.String(), "next: 1.1") {
		t.Errorf("watch EX=1_2 names 1.1, which it did not run, as the next exercise:\n%s", out)
	}
	if poll {
		mustContain(t, "watch output", out.String(), "polling every")
	}

	// Save the way vim and many IDEs do: write a new file, rename it over.
	tmp := filepath.Join(root, "chapters/01/.ex.go.swp")
	solved := strings.Replace(stubGo, "// the number after 1.\n\treturn 0", "// the number after 1.\n\treturn 2", 1)
	if err := os.WriteFile(tmp, []byte(solved), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(root, "chapters/01/ex.go")); err != nil {
		t.Fatal(err)
	}
	second := wait("a rename-on-save")
	if !second["1.2"].Pass {
		t.Fatalf("after the save, 1.2 = %+v; want pass\n%s", second["1.2"], out)
	}
	mustContain(t, "watch output after the save", out.String(), "ok   1.2", "chapter 01: exercise 1.2 passes (15 points); then: make watch CH=01 EX=1_3",
		"not run since your last change: make status says which exercises pass")
}

func TestRelease(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"go.mod":                             "module serverlab\n\ngo 1.26\n",
		".gitignore":                         "users.txt\n/dist/\n*.test\n",
		"Makefile":                           "all:\n",
		"chapters/01/ex.go":                  stubGo,
		"solutions/01/ex.go":                 solvedOne,
		".ci/run":                            "#!/bin/sh\n",
		"tools/maint/mutants/01/1.1/x.patch": "# x\n",
		"tools/x/x_test.go":                  "//go:build solutions\n\npackage x\n",
		"tools/x/y_test.go":                  "//go:build !solutions\n\npackage x\n",
		"tools/x/z_linux_test.go":            "//go:build solutions && linux\n\npackage x\n",
		"tools/x/x.go":                       "// Package x.\npackage x\n",
		"tools/x/race_off.go":                "//go:build !race\n\npackage x\n",
		"users.txt":                          "alice pw 127.0.0.1 1\n",
		"x.test":                             "binary",
		"tools/internal/grade/course.sum":    "0000000000000000000000000000000000000000 tools/old.go\n", // a release's, made anew
	}
	for name, content := range files {
		if err := writeFile(filepath.Join(root, filepath.FromSlash(name)), []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	out, _, err := student(t, root, "release", "-o", "dist/s.tar.gz")
	if err != nil {
		t.Fatalf("release: %v", err)
	}
	mustContain(t, "release", out, "wrote dist/s.tar.gz", "the folder (no git)")
	got := tarNames(t, filepath.Join(root, "dist/s.tar.gz"))
	slices.Sort(got)
	want := []string{".gitignore", ".starter/chapters/01/ex.go", "Makefile", "chapters/01/ex.go", "go.mod", "tools/internal/grade/course.sum", "tools/x/race_off.go", "tools/x/x.go", "tools/x/y_test.go"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("the release holds\n  %v\nwant\n  %v", got, want)
	}

	// The grader's list: the course files the release ships, as it ships them.
	sum := coursesum.Parse(tarFile(t, filepath.Join(root, "dist/s.tar.gz"), coursesum.Path))
	var listed []string
	for f, id := range sum {
		listed = append(listed, f)
		if want := coursesum.BlobID([]byte(files[f])); id != want {
			t.Errorf("course.sum lists %s as %s; its content is %s", f, id, want)
		}
	}
	slices.Sort(listed)
	if want := []string{"go.mod", "tools/x/race_off.go", "tools/x/x.go", "tools/x/y_test.go"}; !slices.Equal(listed, want) {
		t.Errorf("the release's course.sum lists\n  %v\nwant the course files it ships\n  %v", listed, want)
	}
}

// tarFile returns the content of the release's file name (under serverlab/).
func tarFile(t *testing.T, file, name string) string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("the release has no %s: %v", name, err)
		}
		if h.Name == "serverlab/"+name {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
	}
}

func tarNames(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, strings.TrimPrefix(h.Name, "serverlab/"))
	}
	return names
}

// TestFuzztimeRace: only Go's bare deadline error, with no failing input
// written, earns a second run.
func TestFuzztimeRace(t *testing.T) {
	race := "fuzz: elapsed: 20s\n--- FAIL: FuzzX (20.01s)\n    context deadline exceeded\nFAIL\nexit status 1\n"
	if !fuzztimeRace([]byte(race)) {
		t.Error("the coordinator's race was not recognised")
	}
	finding := "--- FAIL: FuzzX (0.10s)\n    x_test.go:9: boom\n    Failing input written to testdata/fuzz/FuzzX/abc\n    context deadline exceeded\nFAIL\n"
	if fuzztimeRace([]byte(finding)) {
		t.Error("a failing input was taken for the coordinator's race")
	}
	if fuzztimeRace([]byte("--- FAIL: FuzzX\n    x_test.go:9: boom\nFAIL\n")) {
		t.Error("a plain failure was taken for the coordinator's race")
	}
}

// After a watched exercise passes, the suggestion is the next one that does
// not: never one that passes already.
func TestNextNotPassing(t *testing.T) {
	ch := rubric.Chapter{ID: "01", Exercises: []rubric.Exercise{{ID: "1.1"}, {ID: "1.2"}, {ID: "1.3"}, {ID: "1.4"}, {ID: "1.5"}}}
	cr := chapterResults{Results: map[string]result{
		"1.1": {Pass: false}, "1.2": {Pass: true}, "1.3": {Pass: true}, "1.4": {Pass: true}, "1.5": {Pass: true},
	}}
	if got, ok := nextNotPassing(ch, cr, ch.Exercises[1]); !ok || got.ID != "1.1" {
		t.Errorf("after 1.2 with 1.3-1.5 passing: got %q, %v; want 1.1 (from the chapter's start)", got.ID, ok)
	}
	cr.Results["1.1"] = result{Pass: true}
	if got, ok := nextNotPassing(ch, cr, ch.Exercises[1]); ok {
		t.Errorf("every exercise passes: got %q, want none", got.ID)
	}
}

func TestBusyLine(t *testing.T) {
	if got := busyLine(machineLoad{Avg1: 1, CPUs: 2}, time.Second); got != "" {
		t.Errorf("a quiet machine: got %q, want no line", got)
	}
	got := busyLine(machineLoad{Avg1: 30, Runnable: 3, CPUs: 2}, 102*time.Second)
	for _, want := range []string{"load average 30.0 on 2 CPUs, as uptime shows it", "took 1m42s", "4.0× as long"} {
		if !strings.Contains(got, want) {
			t.Errorf("busy line %q lacks %q", got, want)
		}
	}
}
