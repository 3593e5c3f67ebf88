package rubric

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadEmbedded(t *testing.T) {
	r, err := Load()
	require.NoError(t, err, "Load")
	ch, ok := r.Chapter("01")
	require.True(t, ok, "embedded rubric has no chapter 01; chapters: %+v", r.Chapters)
	assert.Equal(t, 100, ch.MaxPoints(), "chapter 01 MaxPoints")
	wantTests := []string{
		"TestEx1_1_ReadFrame", "TestEx1_2_WriteFrame", "TestEx1_3_UserStore",
		"TestEx1_4_Serve", "TestEx1_5_Deadlines", "TestEx1_6_Close",
	}
	var tests []string
	for _, ex := range ch.Exercises {
		tests = append(tests, ex.Test)
	}
	require.Equal(t, wantTests, tests, "chapter 01's exercises, by test")
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
	require.NoError(t, err, "Parse")
	assert.Equal(t, 45, r.MaxPoints(), "MaxPoints")
	ch, ok := r.Chapter("12")
	if assert.True(t, ok, "Chapter(\"12\") not found") {
		assert.Equal(t, "Twelve", ch.Title, "Chapter(\"12\")")
		assert.Equal(t, 5, ch.MaxPoints(), "Chapter(\"12\").MaxPoints")
	}
	_, ok = r.Chapter("02")
	assert.False(t, ok, "Chapter(\"02\") found a chapter the rubric does not have")
	one, _ := r.Chapter("01")
	assert.Equal(t, time.Minute, one.Exercises[0].TimeLimit(time.Minute), "TimeLimit without timeout: want the default")
	assert.Equal(t, 90*time.Second, one.Exercises[1].TimeLimit(time.Minute), "TimeLimit with \"90s\"")
	assert.Equal(t, "Ex1_2_", one.Exercises[1].RunPattern(), "RunPattern")
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
			require.Error(t, err, "Parse(%s): want an error containing %q", tt.json, tt.want)
			for _, w := range tt.want {
				assert.ErrorContains(t, err, w, "Parse error")
			}
		})
	}
}

// TestEveryExerciseHasHints keeps make hint complete: every exercise of the
// rubric has one hint of each kind, in order, none of them empty.
func TestEveryExerciseHasHints(t *testing.T) {
	r, err := Load()
	require.NoError(t, err, "Load")
	for _, ch := range r.Chapters {
		for _, ex := range ch.Exercises {
			if len(ex.Hints) != len(HintKinds) {
				t.Errorf("exercise %s has %d hints; want %d (%s) in hints/%s.md",
					ex.ID, len(ex.Hints), len(HintKinds), strings.Join(HintKinds, ", "), ch.ID)
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

// TestHintsFileRefusesWhatIsNotThere: a hints file with a section the
// chapter lacks, a missing section, a hint out of order or a title that
// differs from the points table is refused with its line.
func TestHintsFileRefusesWhatIsNotThere(t *testing.T) {
	ch := Chapter{ID: "09", Exercises: []Exercise{{ID: "9.1", Title: "One"}}}
	four := "### The idea\nA.\n### The pitfall\nB.\n### The API to use\nC.\n### The recipe\nD.\n\nE.\n"
	good := "# preface\n\n## 9.1 One\n\n" + four
	c := ch
	c.Exercises = slices.Clone(ch.Exercises)
	if err := c.attachHints("hints/09.md", []byte(good)); err != nil {
		t.Fatalf("a good file: %v", err)
	}
	if got := c.Exercises[0].Hints; len(got) != 4 || got[3] != "D.\nE." {
		t.Errorf("hints = %q, want four, the recipe two lines", got)
	}
	for name, md := range map[string]string{
		"extra section":  good + "## 9.2 Two\n" + four,
		"no section":     "# preface\n",
		"out of order":   "## 9.1 One\n### The pitfall\nB.\n",
		"other title":    "## 9.1 Uno\n" + four,
		"text too early": "## 9.1 One\nstray\n" + four,
	} {
		c := ch
		c.Exercises = slices.Clone(ch.Exercises)
		if err := c.attachHints("hints/09.md", []byte(md)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
