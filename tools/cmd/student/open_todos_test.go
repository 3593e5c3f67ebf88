package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// guidedTodo is a guided stub's mark, with its exercise.
var guidedTodo = regexp.MustCompile(`TODO\(ex ([0-9]+)\.([0-9]+)\)`)

// TestOpenStartersNameEveryExercise holds each open track to its guided
// starter: an exercise the guided starter marks with a TODO(ex N.K) (code of
// its own to write) is named on the open track too, where a student who
// reset to it looks for the work — a file KEEP keeps, or the open starter's
// files. The open track's design is the student's, so one TODO there may
// cover several exercises in prose (chapter 05's "the chat server on the
// loop: … broadcast (5.10) …"); an exercise counts as named by its own
// TODO(ex N.K), by "(N.K)" or by its test's name (TestExN_K_). An
// exercise added to the guided starter only (maint3's 4.8) would otherwise
// be graded on the open track with nothing there to say it exists.
func TestOpenStartersNameEveryExercise(t *testing.T) {
	root, err := filepath.Abs(courseRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range openChapters(t, root) {
		dir := filepath.Join(root, "chapters", ch)
		open := filepath.Join(dir, filepath.FromSlash(openDir))
		keep, err := readKeep(filepath.Join(open, "KEEP"))
		if err != nil {
			t.Fatal(err)
		}
		guided, err := goFilesIn(dir)
		if err != nil {
			t.Fatal(err)
		}
		starter, err := goFilesIn(open)
		if err != nil {
			t.Fatal(err)
		}
		var guidedText, openText strings.Builder
		for _, name := range guided {
			src, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			guidedText.Write(src)
			if slices.Contains(keep, name) {
				openText.Write(src)
			}
		}
		for _, name := range starter {
			src, err := os.ReadFile(filepath.Join(open, name))
			if err != nil {
				t.Fatal(err)
			}
			openText.Write(src)
		}
		var missing []string
		for _, m := range guidedTodo.FindAllStringSubmatch(guidedText.String(), -1) {
			id := m[1] + "." + m[2]
			named := strings.Contains(openText.String(), "TODO(ex "+id+")") ||
				strings.Contains(openText.String(), "("+id+")") ||
				strings.Contains(openText.String(), "TestEx"+m[1]+"_"+m[2]+"_")
			if !named && !slices.Contains(missing, id) {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			t.Errorf("chapter %s: the guided starter marks %s with TODO(ex …), and the open track (%s/ and the files its KEEP keeps) names it nowhere: "+
				"add a TODO(ex N.K) with its contract to the open starter (or name the exercise, \"(N.K)\", in the TODO that covers it)",
				ch, strings.Join(missing, ", "), filepath.ToSlash(filepath.Join("chapters", ch, openDir)))
		}
	}
}
