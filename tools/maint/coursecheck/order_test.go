package main

import (
	"slices"
	"testing"
)

// TestSlowestFirst: the workers take the later chapters' mutants first, each
// chapter's in catalogue order, so that a slow 08 mutant does not start last.
func TestSlowestFirst(t *testing.T) {
	graded := []mutant{{chapter: "03"}, {chapter: "05"}, {chapter: "06"}, {chapter: "06"}, {chapter: "08"}, {chapter: "07"}}
	got := slowestFirst(graded)
	want := []int{4, 5, 2, 3, 1, 0}
	if !slices.Equal(got, want) {
		t.Errorf("slowestFirst = %v, want %v", got, want)
	}
}
