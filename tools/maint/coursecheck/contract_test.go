package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"serverlab/tools/internal/rubric"
)

// The contract for adding an exercise (CONTRIBUTING.md) has steps whose
// omission nothing else notices before a student does. Each test here is
// the check that a step names.

// Step 5: every exercise of the rubric has a stub in its chapter, a
// `// TODO(ex N.K)` the student fills in, unless the rubric says why it has
// no code of its own (no_stub). Without one the exercise's points
// come with whatever earlier exercise its code belongs to, and the ladder
// only notes it.
func TestEveryExerciseHasAStub(t *testing.T) {
	r, err := rubric.Load()
	if err != nil {
		t.Fatal(err)
	}
	todo := regexp.MustCompile(`TODO\(ex ([0-9]+\.[0-9]+)\)`)
	for _, ch := range r.Chapters {
		dir := filepath.Join("../../..", "chapters", ch.ID)
		found := map[string]bool{}
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.Contains(p, string(filepath.Separator)+"testdata"+string(filepath.Separator)) {
				return err
			}
			b, err := os.ReadFile(p)
			for _, m := range todo.FindAllStringSubmatch(string(b), -1) {
				found[m[1]] = true
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, ex := range ch.Exercises {
			switch {
			case !found[ex.ID] && ex.NoStub == "":
				t.Errorf("exercise %s has no stub in chapters/%s: mark the declaration the student writes with // TODO(ex %s): … "+
					"(CONTRIBUTING.md, step 5), or say in the rubric's no_stub why it has no code of its own", ex.ID, ch.ID, ex.ID)
			case found[ex.ID] && ex.NoStub != "":
				t.Errorf("exercise %s has a TODO(ex %s) in chapters/%s, and the rubric says it has none (no_stub): drop one", ex.ID, ex.ID, ch.ID)
			}
		}
	}
}

// Step 1: a chapter is worth 100 points, so that every chapter weighs the
// same in the course's 800 (docs/grading.md).
func TestEveryChapterIsWorth100(t *testing.T) {
	r, err := rubric.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range r.Chapters {
		if got := ch.MaxPoints(); got != 100 {
			t.Errorf("chapter %s's exercises are worth %d points in all, want 100: change the points in tools/internal/rubric/rubric.json (CONTRIBUTING.md, step 1)", ch.ID, got)
		}
	}
}

// Step 8: every exercise has at least four plausible wrong solutions in the
// catalogue (make mutants grades them; this only counts them).
func TestEveryExerciseHasFourMutants(t *testing.T) {
	r, err := rubric.Load()
	if err != nil {
		t.Fatal(err)
	}
	all, err := findMutants("../../..", "tools/maint/mutants")
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, m := range all {
		count[m.exercise]++
	}
	for _, ch := range r.Chapters {
		for _, ex := range ch.Exercises {
			if n := count[ex.ID]; n < 4 {
				t.Errorf("exercise %s has %d wrong solutions in tools/maint/mutants/%s/%s/, want at least 4 (CONTRIBUTING.md, step 8; the format: tools/maint/mutants/README.md)", ex.ID, n, ch.ID, ex.ID)
			}
		}
	}
}
