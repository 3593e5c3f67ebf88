package main

import (
	"flag"
	"os"
	"os/exec"
	"strings"
	"testing"
)

var updateCourseSum = flag.Bool("update-course-sum", false, "rewrite tools/grade/course.sum from the work tree")

// TestCourseSumIsCurrent keeps course.sum, the grader's list of the course's
// own files, in step with the course. It needs git (the list is of the files
// git tracks); a student release has no git and skips it.
func TestCourseSumIsCurrent(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git: course.sum is checked in the course's repository")
	}
	if err := exec.Command("git", "-C", "../..", "rev-parse", "--is-inside-work-tree").Run(); err != nil {
		t.Skip("not a git work tree (a student release): course.sum is checked in the course's repository")
	}
	if _, err := os.Stat("../../solutions"); err != nil {
		t.Skip("no solutions/ (a student release): course.sum is checked in the course's repository")
	}
	want, err := writeCourseSum("../..")
	if err != nil {
		t.Fatal(err)
	}
	if *updateCourseSum {
		if err := os.WriteFile("course.sum", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if courseSum != want {
		got, wantFiles := parseCourseSum(courseSum), parseCourseSum(want)
		var diff []string
		for p, id := range wantFiles {
			if got[p] != id {
				diff = append(diff, p)
			}
		}
		for p := range got {
			if _, ok := wantFiles[p]; !ok {
				diff = append(diff, p+" (gone)")
			}
		}
		t.Fatalf("tools/grade/course.sum is out of date (%d files: %s);\nregenerate it with: go test ./tools/grade -run TestCourseSum -update-course-sum",
			len(diff), strings.Join(diff[:min(len(diff), 10)], ", "))
	}
}

func TestIsCourseFile(t *testing.T) {
	for p, want := range map[string]bool{
		"go.mod": true, "go.sum": true, "tests/testkit/testkit.go": true, "tools/wire/wire.go": true,
		"chapters/01/discovery_test.go": true, "solutions/03/jobserver_test.go": true,
		"chapters/01/codec.go": false, "chapters/01/cmd/x/x_test.go": false, "tools/grade/course.sum": false,
		"tools/grade/main.go": false, "tools/grade/testdata/chapters/01/fixture_test.go": true,
		"tools/grade/testdata/chapters/01/fixture.go": false, "tools/grade/testdata/rubric.json": false,
		"README.md": false, "docs/grading.md": false,
	} {
		if got := isCourseFile(p); got != want {
			t.Errorf("isCourseFile(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestBlobIDIsGits(t *testing.T) {
	// git hash-object of "hello\n", and the same with CRLF.
	const want = "ce013625030ba8dba906f756967f9e9ca394464a"
	for _, s := range []string{"hello\n", "hello\r\n"} {
		if got := blobID([]byte(s)); got != want {
			t.Errorf("blobID(%q) = %s, want %s", s, got, want)
		}
	}
}

// Must agree with tests/testkit/record_test.go's vector.
func TestRecordMACVector(t *testing.T) {
	const want = "0f084f1a2b43dac98889b0a24b798109c3549e7b98ba9c43c84540edc9d932ab"
	if got := recordMAC([]byte("0123456789abcdef"), "TestEx1_1_ReadFrame"); got != want {
		t.Errorf("recordMAC = %s, want %s (tests/testkit/record.go computes the same)", got, want)
	}
}
