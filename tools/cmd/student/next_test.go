package main

import (
	"testing"
	"time"

	"serverlab/tools/internal/rubric"
)

// TestPickNextFollowsTheLastEdit: next names the chapter the student edited
// last, not chapter 01's first exercise for a student who skipped ahead; a
// finished chapter is never chosen; untouched chapters keep course order.
func TestPickNextFollowsTheLastEdit(t *testing.T) {
	chapters := []rubric.Chapter{
		{ID: "01", Exercises: []rubric.Exercise{{ID: "1.1"}, {ID: "1.2"}}},
		{ID: "02", Exercises: []rubric.Exercise{{ID: "2.1"}}},
		{ID: "07", Exercises: []rubric.Exercise{{ID: "7.1"}, {ID: "7.2"}}},
	}
	all := map[string]chapterResults{
		"01": {Results: map[string]result{}},
		"02": {Results: map[string]result{"2.1": {Pass: true}}},
		"07": {Results: map[string]result{"7.1": {Pass: true}}},
	}
	unpacked := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		edited map[string]time.Time
		want   string
	}{
		{"nothing edited", map[string]time.Time{"01": unpacked, "02": unpacked, "07": unpacked.Add(time.Second)}, "1.1"},
		{"chapter 07 edited last", map[string]time.Time{"01": unpacked, "02": unpacked, "07": unpacked.Add(time.Hour)}, "7.2"},
		{"chapter 01 edited last", map[string]time.Time{"01": unpacked.Add(2 * time.Hour), "07": unpacked.Add(time.Hour)}, "1.1"},
		{"a finished chapter edited last", map[string]time.Time{"02": unpacked.Add(3 * time.Hour), "07": unpacked.Add(time.Hour)}, "7.2"},
	} {
		_, ex, ok := pickNext(chapters, all, tc.edited)
		if !ok || ex.ID != tc.want {
			t.Errorf("%s: next is %q (found %v), want %s", tc.name, ex.ID, ok, tc.want)
		}
	}
}

// TestNextWithAnArgument: `next 1.2` shows that exercise and `next 01` the
// chapter's first that does not pass; anything else is a usage error.
func TestNextWithAnArgument(t *testing.T) {
	root := fixture(t, solvedOne)
	out, log, err := student(t, root, "next", "01")
	if err != nil {
		t.Fatalf("next 01: %v\n%s", err, log)
	}
	mustContain(t, "next 01", out, "next: 1.2 Write one frame")
	out, log, err = student(t, root, "next", "1.1")
	if err != nil {
		t.Fatalf("next 1.1: %v\n%s", err, log)
	}
	mustContain(t, "next 1.1", out, "next: 1.1 ")
	if _, _, err := student(t, root, "next", "99"); err == nil {
		t.Errorf("next 99: no error, want an unknown chapter")
	}
	if _, _, err := student(t, root, "next", "1.1", "1.2"); err == nil {
		t.Errorf("next 1.1 1.2: no error, want usage")
	}
}
