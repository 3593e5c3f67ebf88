//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"serverlab/tools/internal/grade"
)

// TestGradeLinkedFiles: git stores symbolic links, so a student's repository
// can hold a course file or a chapter's TRACK marker that is a link to
// /dev/zero (cheater4 a16, a17): read whole, it ran the grader out of memory
// before any report. The grader reads no file of the tree that is not a
// regular one of bounded size: the course file counts as differing (the
// course's copy is built, or, with none at hand, nothing is graded), the
// marker as absent, and the report says which and why.
func TestGradeLinkedFiles(t *testing.T) {
	t.Parallel()
	course, err := filepath.Abs(fixtureRoot)
	if err != nil {
		t.Fatal(err)
	}
	root := cleanCopy(t)
	link := func(rel string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		_ = os.Remove(p)
		if err := os.Symlink("/dev/zero", p); err != nil {
			t.Fatal(err)
		}
	}
	link("tests/testkit/testkit.go")
	args := []string{"-root", root, "-target", fixtureTarget, "-rubric", "testdata/rubric-cheats.json", "-ch", "08"}
	rep := gradeJSON(t, append(args, "-course", course)...)
	checkResults(t, rep, map[string]wantResult{
		"8.1": {grade.CauseFailed, "Answer() = 0, ex 8.1: Answer: not implemented; want 42"},
	})
	want := "tests/testkit/testkit.go is a symbolic link: the grader reads only regular files of the tree, not what a link points to: built with the course's copy"
	if notes := strings.Join(rep.Notes, "\n"); !strings.Contains(notes, want) {
		t.Errorf("the report's notes lack %q; they are:\n%s", want, notes)
	}

	// The marker is not read, and the gate refuses the chapter for the link.
	link(fixtureTarget + "/08/" + grade.TrackFile)
	rep = gradeJSON(t, append(args, "-course", course)...)
	checkResults(t, rep, map[string]wantResult{
		"8.1": {grade.CauseIntegrity, "a symbolic link (TRACK)"},
	})
	if want, notes := "track marker: "+fixtureTarget+"/08/TRACK is a symbolic link", strings.Join(rep.Notes, "\n"); !strings.Contains(notes, want) {
		t.Errorf("the report's notes lack %q; they are:\n%s", want, notes)
	}
	_ = os.Remove(filepath.Join(root, filepath.FromSlash(fixtureTarget+"/08/"+grade.TrackFile)))

	// A release has no git history: without -course nothing is graded, and
	// the course-files lines do not end with "all N match" (cheater4 a01).
	rep = gradeJSON(t, args...)
	checkResults(t, rep, map[string]wantResult{
		"8.1": {grade.CauseIntegrity, "tests/testkit/testkit.go is a symbolic link"},
	})
	if notes := strings.Join(rep.Notes, "\n"); strings.Contains(notes, "course files: all ") {
		t.Errorf("after an integrity refusal the notes still say every course file matches:\n%s", notes)
	}
}

// TestGradeOwnListUnverified: graded without -course, a tree's course files
// are checked against the tree's own list (its course.sum), which a
// student's repository can forge along with the files (cheater4 a02): the
// report says that "all N match" is on the tree's word.
func TestGradeOwnListUnverified(t *testing.T) {
	t.Parallel()
	root := cleanCopy(t)
	rep := gradeJSON(t, "-root", root, "-target", fixtureTarget, "-rubric", "testdata/rubric-cheats.json", "-ch", "08")
	notes := strings.Join(rep.Notes, "\n")
	if !strings.Contains(notes, "match the graded tree's own list") || !strings.Contains(notes, "-course DIR") {
		t.Errorf("graded on the tree's own course.sum, the notes should say the match is unverified:\n%s", notes)
	}

	// A chapter's test file deleted, with no copy of it at hand: the chapter
	// is refused, and the notes say so rather than "all N match" (a01).
	if err := os.Remove(filepath.Join(root, filepath.FromSlash(fixtureTarget+"/08/stub_test.go"))); err != nil {
		t.Fatal(err)
	}
	rep = gradeJSON(t, "-root", root, "-target", fixtureTarget, "-rubric", "testdata/rubric-cheats.json", "-ch", "08")
	checkResults(t, rep, map[string]wantResult{
		"8.1": {grade.CauseIntegrity, "stub_test.go is missing"},
	})
	notes = strings.Join(rep.Notes, "\n")
	if strings.Contains(notes, "course files: all ") || !strings.Contains(notes, "stub_test.go is missing") {
		t.Errorf("after a refused chapter the notes should name the missing file, not say every course file matches:\n%s", notes)
	}
}
