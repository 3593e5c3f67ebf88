package rubric

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"testing"
)

// courseRoot is the module root, seen from this package's directory (go test
// runs a package's tests in its own directory).
const courseRoot = "../../.."

// graded test functions, as the chapters' test wiring declares them.
var testFuncPattern = regexp.MustCompile(`(?m)^func (TestEx[0-9]+_[0-9]+_\w*)\(t \*testing\.T\)`)

// TestREADMEsAgreeWithRubric keeps the rubric, the lessons and the test wiring
// in step: every chapter in the rubric exists, its README's exercise table is
// the rubric's, and every graded test is declared in both chapters/NN and
// solutions/NN (when there is one) — and nothing named TestEx… there escapes the rubric.
func TestREADMEsAgreeWithRubric(t *testing.T) {
	r, err := Load()
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	for _, ch := range r.Chapters {
		t.Run(ch.ID, func(t *testing.T) {
			readmePath := filepath.Join(courseRoot, "chapters", ch.ID, "README.md")
			readme, err := os.ReadFile(readmePath)
			if err != nil {
				t.Errorf("the rubric lists chapter %s, but its lesson cannot be read: %v", ch.ID, err)
			} else if err := CheckREADME(ch, readme); err != nil {
				t.Errorf("%s disagrees with the rubric:\n%v", readmePath, err)
			}
			for _, tree := range courseTrees(t) {
				checkTestWiring(t, ch, filepath.Join(courseRoot, tree, ch.ID))
			}
		})
	}
}

// courseTrees are the folders that hold a copy of every chapter: chapters/,
// and solutions/ unless this is the student release, which ships without it.
func courseTrees(t *testing.T) []string {
	if _, err := os.Stat(filepath.Join(courseRoot, "solutions")); errors.Is(err, fs.ErrNotExist) {
		t.Log("no solutions/ (the student release): checking chapters/ only")
		return []string{"chapters"}
	}
	return []string{"chapters", "solutions"}
}

// checkTestWiring checks that dir's *_test.go files declare exactly the
// chapter's graded tests.
func checkTestWiring(t *testing.T, ch Chapter, dir string) {
	t.Helper()
	declared, err := declaredTests(dir)
	if err != nil {
		t.Errorf("the rubric lists chapter %s, but %s cannot be scanned: %v", ch.ID, dir, err)
		return
	}
	inRubric := map[string]bool{}
	for _, ex := range ch.Exercises {
		inRubric[ex.Test] = true
		if !declared[ex.Test] {
			t.Errorf("%s: exercise %s is graded by %s, but no *_test.go there declares func %s(t *testing.T)",
				dir, ex.ID, ex.Test, ex.Test)
		}
	}
	var extra []string
	for name := range declared {
		if !inRubric[name] {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	for _, name := range extra {
		t.Errorf("%s declares %s, which the rubric does not grade: add it to rubric.json or rename it", dir, name)
	}
}

// declaredTests returns the graded test functions declared in dir/*_test.go.
// A missing dir is an error: the rubric must not list chapters that are not
// there.
func declaredTests(dir string) (map[string]bool, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	declared := map[string]bool{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, m := range testFuncPattern.FindAllSubmatch(src, -1) {
			declared[string(m[1])] = true
		}
	}
	return declared, nil
}
