package main

import (
	"strings"
	"testing"

	"serverlab/tools/internal/rubric"
)

// requireNoNewFiles fails a test of chapter ch at once when the chapter
// lacks a file of the solution that its given code uses (newFiles): the
// compiler's "undefined" that would follow does not say that the fix is a
// new file in chapters/NN.
func requireNoNewFiles(t *testing.T, root string, ch rubric.Chapter) {
	t.Helper()
	results, err := mirrorChapter(root, "chapters", "solutions", ch)
	if err != nil {
		t.Fatalf("the mirror of chapter %s: %v", ch.ID, err)
	}
	var problems []string
	for _, r := range results {
		if r.want == nil {
			problems = append(problems, r.problems...)
		}
	}
	if len(problems) > 0 {
		t.Fatalf("chapter %s:\n%s", ch.ID, strings.Join(problems, "\n"))
	}
}
