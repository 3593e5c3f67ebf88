package rubric

import (
	"strings"
	"testing"
	"time"
)

func TestLoadEmbedded(t *testing.T) {
	r, err := Load()
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	ch, ok := r.Chapter("01")
	if !ok {
		t.Fatalf("embedded rubric has no chapter 01; chapters: %+v", r.Chapters)
	}
	if got, want := ch.MaxPoints(), 100; got != want {
		t.Errorf("chapter 01 MaxPoints = %d, want %d", got, want)
	}
	wantTests := []string{
		"TestEx1_1_ReadFrame", "TestEx1_2_WriteFrame", "TestEx1_3_UserStore",
		"TestEx1_4_Serve", "TestEx1_5_Deadlines", "TestEx1_6_Close",
	}
	if len(ch.Exercises) != len(wantTests) {
		t.Fatalf("chapter 01 has %d exercises, want %d", len(ch.Exercises), len(wantTests))
	}
	for i, ex := range ch.Exercises {
		if ex.Test != wantTests[i] {
			t.Errorf("chapter 01 exercise %d test = %q, want %q", i, ex.Test, wantTests[i])
		}
	}
}

const validRubric = `{"chapters": [
  {"id": "01", "title": "One", "exercises": [
    {"id": "1.1", "title": "First", "points": 10, "test": "TestEx1_1_First"},
    {"id": "1.2", "title": "Second", "points": 30, "test": "TestEx1_2_Second", "timeout": "90s"}
  ]},
  {"id": "12", "title": "Twelve", "exercises": [
    {"id": "12.1", "title": "Only", "points": 5, "test": "TestEx12_1_Only"}
  ]}
]}`

func TestParseValid(t *testing.T) {
	r, err := Parse(strings.NewReader(validRubric))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if got, want := r.MaxPoints(), 45; got != want {
		t.Errorf("MaxPoints = %d, want %d", got, want)
	}
	ch, ok := r.Chapter("12")
	if !ok || ch.Title != "Twelve" || ch.MaxPoints() != 5 {
		t.Errorf("Chapter(\"12\") = %+v, %v; want the chapter titled Twelve worth 5", ch, ok)
	}
	if _, ok := r.Chapter("02"); ok {
		t.Errorf("Chapter(\"02\") found a chapter the rubric does not have")
	}
	one, _ := r.Chapter("01")
	if got := one.Exercises[0].TimeLimit(time.Minute); got != time.Minute {
		t.Errorf("TimeLimit without timeout = %v, want the default 1m", got)
	}
	if got := one.Exercises[1].TimeLimit(time.Minute); got != 90*time.Second {
		t.Errorf("TimeLimit with \"90s\" = %v, want 1m30s", got)
	}
	if got := one.Exercises[1].RunPattern(); got != "Ex1_2_" {
		t.Errorf("RunPattern = %q, want %q", got, "Ex1_2_")
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		name string
		json string
		want []string // substrings the error must contain
	}{
		{
			name: "unknown field",
			json: `{"chapters": [{"id": "01", "title": "T", "exercises": [{"id": "1.1", "title": "A", "point": 5, "test": "TestEx1_1_A"}]}]}`,
			want: []string{`unknown field "point"`},
		},
		{
			name: "no chapters",
			json: `{"chapters": []}`,
			want: []string{"no chapters"},
		},
		{
			name: "bad chapter id and empty chapter",
			json: `{"chapters": [{"id": "1", "title": "T", "exercises": []}]}`,
			want: []string{"two digits", "no exercises"},
		},
		{
			name: "duplicates",
			json: `{"chapters": [
				{"id": "01", "title": "T", "exercises": [{"id": "1.1", "title": "A", "points": 5, "test": "TestEx1_1_A"}]},
				{"id": "01", "title": "T", "exercises": [{"id": "1.1", "title": "B", "points": 5, "test": "TestEx1_1_A"}]}]}`,
			want: []string{"duplicate chapter id", "duplicate exercise id", "already used by exercise 1.1"},
		},
		{
			name: "points, title and timeout",
			json: `{"chapters": [{"id": "01", "title": "T", "exercises": [{"id": "1.1", "title": "", "points": 0, "test": "TestEx1_1_A", "timeout": "soon"}]}]}`,
			want: []string{"points must be > 0", "missing title", `timeout "soon"`},
		},
		{
			name: "test name does not match the id",
			json: `{"chapters": [{"id": "01", "title": "T", "exercises": [{"id": "1.2", "title": "A", "points": 5, "test": "TestEx1_3_A"}]}]}`,
			want: []string{"must start with TestEx1_2_"},
		},
		{
			name: "test name without the Ex prefix",
			json: `{"chapters": [{"id": "01", "title": "T", "exercises": [{"id": "1.1", "title": "A", "points": 5, "test": "TestReadFrame"}]}]}`,
			want: []string{"must be named TestEx<n>_<m>_<Name>"},
		},
		{
			name: "exercise in the wrong chapter",
			json: `{"chapters": [{"id": "02", "title": "T", "exercises": [{"id": "1.1", "title": "A", "points": 5, "test": "TestEx1_1_A"}]}]}`,
			want: []string{"must start with the chapter number 2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tt.json))
			if err == nil {
				t.Fatalf("Parse(%s) succeeded, want an error containing %q", tt.json, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Parse error = %q\nwant it to contain %q", err, w)
				}
			}
		})
	}
}

// TestEveryExerciseHasHints keeps make hint complete: every exercise of the
// rubric has one hint of each kind, in order, none of them empty.
func TestEveryExerciseHasHints(t *testing.T) {
	r, err := Load()
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	for _, ch := range r.Chapters {
		for _, ex := range ch.Exercises {
			if len(ex.Hints) != len(HintKinds) {
				t.Errorf("exercise %s has %d hints; want %d (%s) in rubric.json",
					ex.ID, len(ex.Hints), len(HintKinds), strings.Join(HintKinds, ", "))
				continue
			}
			for i, h := range ex.Hints {
				if strings.TrimSpace(h) == "" {
					t.Errorf("exercise %s: hint %d (%s) is empty", ex.ID, i+1, HintKinds[i])
				}
			}
		}
	}
}
