package grade

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"serverlab/tools/internal/coursesum"
)

// TestCourseList: the grader's list of the course's files is the release's
// course.sum where there is one, else the git tree of HEAD (uncommitted
// edits and untracked files are not the course), else nothing; a clean copy
// named with -course DIR is the course as its files stand. A file that
// differs from HEAD is restored from git by its blob id.
func TestCourseList(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := t.TempDir()
	committed := map[string]string{
		"go.mod":                  "module serverlab\n\ngo 1.26\n",
		"tests/x/x.go":            "package x\n",
		"chapters/01/a_test.go":   "package a\n",
		"chapters/01/a.go":        "package a // the student's\n",
		"tools/cmd/grade/main.go": "package main // the grader's own\n",
		"README.md":               "# course\n",
	}
	for name, content := range committed {
		writeTestFile(t, root, name, content)
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", root, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "the course")
	writeTestFile(t, root, "tests/x/x.go", "package x // edited, not committed\n")
	writeTestFile(t, root, "tests/x/y.go", "package x // untracked\n")

	files, from := CourseList(root, false)
	want := map[string]string{}
	for _, f := range []string{"go.mod", "tests/x/x.go", "chapters/01/a_test.go"} {
		want[f] = blobID([]byte(committed[f]))
	}
	if !strings.HasPrefix(from, "git HEAD ") || !sameList(files, want) {
		t.Errorf("courseList of a git checkout = %v from %q; want HEAD's course files %v", files, from, want)
	}

	t.Chdir(root) // -course . names the checkout relative to the current directory
	if files, from := CourseList(".", true); !strings.HasPrefix(from, "git HEAD ") || !sameList(files, want) {
		t.Errorf("courseList(\".\") in a git checkout = %v from %q; want HEAD's course files %v", files, from, want)
	}

	p := newPristine(courseDefault, root, t.TempDir())
	ov := overlay{Replace: map[string]string{}}
	if msg := p.restore("tests/x/x.go", &ov); msg != "" {
		t.Fatalf("restore of an edited course file: %s", msg)
	}
	dst := ov.Replace[filepath.Join(root, "tests", "x", "x.go")]
	if b, err := os.ReadFile(dst); err != nil || string(b) != committed["tests/x/x.go"] {
		t.Errorf("the edited file is built with %q (%v); want HEAD's %q", b, err, committed["tests/x/x.go"])
	}
	if notes := strings.Join(p.notes, "\n"); !strings.Contains(notes, "tests/x/x.go differs from the course's copy: built with the course's copy (from git object") {
		t.Errorf("the notes do not say the file was restored from git:\n%s", notes)
	}

	release := map[string]string{"go.mod": want["go.mod"], "tests/x/z.go": blobID([]byte("package x\n"))}
	writeTestFile(t, root, coursesum.Path, coursesum.Format(release))
	if files, from := CourseList(root, false); from != coursesum.Path || !sameList(files, release) {
		t.Errorf("courseList with a course.sum = %v from %q; want the release's list %v", files, from, release)
	}

	plain := t.TempDir()
	writeTestFile(t, plain, "go.mod", committed["go.mod"])
	writeTestFile(t, plain, "chapters/01/a.go", committed["chapters/01/a.go"])
	if files, from := CourseList(plain, false); files != nil {
		t.Errorf("courseList of a checkout without list or git = %v from %q; want none", files, from)
	}
	if files, _ := CourseList(plain, true); !sameList(files, map[string]string{"go.mod": want["go.mod"]}) {
		t.Errorf("courseList of a clean copy = %v; want its course files as they stand", files)
	}
}

// TestMaintainersTreeHasNoCourseSum: course.sum is the release's, written by
// make student-release. In the maintainers' tree the course is HEAD, and a
// course.sum there (a stale copy, a file unpacked from a release) would be
// trusted instead.
func TestMaintainersTreeHasNoCourseSum(t *testing.T) {
	if _, err := os.Stat("../../../solutions"); err != nil {
		t.Skip("no solutions/ (a student release): its course.sum is the release's")
	}
	if _, err := os.Stat(filepath.Join("../../..", filepath.FromSlash(coursesum.Path))); err == nil {
		t.Fatalf("%s exists in the maintainers' tree: the grader would trust it over git HEAD; delete it (make student-release writes it into the release)", coursesum.Path)
	}
}

func sameList(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func writeTestFile(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
