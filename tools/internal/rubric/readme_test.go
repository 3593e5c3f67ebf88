package rubric

import (
	"strings"
	"testing"
)

var fixtureChapter = Chapter{
	ID:    "01",
	Title: "Iterative discovery server",
	Exercises: []Exercise{
		{ID: "1.1", Title: "Read one frame", Points: 15, Test: "TestEx1_1_ReadFrame"},
		{ID: "1.2", Title: "Write one frame", Points: 15, Test: "TestEx1_2_WriteFrame"},
		{ID: "1.3", Title: "User store", Points: 20, Test: "TestEx1_3_UserStore"},
	},
}

const goodREADME = `# Chapter 01

Some prose | with a pipe that is not a table.

## Exercises

| Exercise | Title | Points | Test |
|---|---|---|---|
| 1.1 | Read one frame | 15 | TestEx1_1_ReadFrame |
|  1.2  |  Write one frame  | 15 | TestEx1_2_WriteFrame|
| 1.3 | User store | 20 | TestEx1_3_UserStore |

More prose after the table.

| Command | What |
|---|---|
| go test | runs tests |
`

func TestCheckREADMEAccepts(t *testing.T) {
	if err := CheckREADME(fixtureChapter, []byte(goodREADME)); err != nil {
		t.Errorf("CheckREADME on a matching table: %v", err)
	}
	aligned := strings.Replace(goodREADME, "|---|---|---|---|", "|:---|:---|---:|---|", 1)
	if err := CheckREADME(fixtureChapter, []byte(aligned)); err != nil {
		t.Errorf("CheckREADME with alignment colons in the delimiter row: %v", err)
	}
}

func TestCheckREADMEReportsEveryMismatch(t *testing.T) {
	readme := `intro
| Exercise | Title | Points | Test |
|---|---|---|---|
| 1.1 | Read a frame | 15 | TestEx1_1_ReadFrame |
| 1.2 | Write one frame | 10 | TestEx1_2_Write |
| 1.4 | Bonus | 5 | TestEx1_4_Bonus |
`
	err := CheckREADME(fixtureChapter, []byte(readme))
	if err == nil {
		t.Fatal("CheckREADME accepted a table with wrong title, points, test, a missing and an extra row")
	}
	want := []string{
		`exercise 1.1 title is "Read a frame", rubric says "Read one frame"`,
		`exercise 1.2 points are "10", rubric says 15`,
		`exercise 1.2 test is "TestEx1_2_Write", rubric says "TestEx1_2_WriteFrame"`,
		`missing row for exercise 1.3: | 1.3 | User store | 20 | TestEx1_3_UserStore |`,
		`extra row for exercise "1.4"`,
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("CheckREADME error:\n%v\nwant it to contain %q", err, w)
		}
	}
	if n := strings.Count(err.Error(), "\n") + 1; n != len(want) {
		t.Errorf("CheckREADME reported %d problems, want %d:\n%v", n, len(want), err)
	}
}

func TestCheckREADMEMalformedTables(t *testing.T) {
	tests := []struct {
		name, readme, want string
	}{
		{
			name:   "no table",
			readme: "# Chapter 01\nNo table here.\n",
			want:   "no exercise table",
		},
		{
			name:   "extra column in header",
			readme: "| Exercise | Title | Points | Test | Notes |\n|---|---|---|---|---|\n",
			want:   "exercise table header is | Exercise | Title | Points | Test | Notes |",
		},
		{
			name: "extra column in a row",
			readme: "| Exercise | Title | Points | Test |\n|---|---|---|---|\n" +
				"| 1.1 | Read one frame | 15 | TestEx1_1_ReadFrame | extra |\n",
			want: "line 3: row has 5 cells, want 4",
		},
		{
			name:   "missing delimiter row",
			readme: "| Exercise | Title | Points | Test |\n| 1.1 | Read one frame | 15 | TestEx1_1_ReadFrame |\n",
			want:   "must be followed by |---|---|---|---|",
		},
		{
			name: "two tables",
			readme: "| Exercise | Title | Points | Test |\n|---|---|---|---|\n\n" +
				"| Exercise | Title | Points | Test |\n|---|---|---|---|\n",
			want: "a second exercise table",
		},
		{
			name: "duplicate row",
			readme: "| Exercise | Title | Points | Test |\n|---|---|---|---|\n" +
				"| 1.1 | Read one frame | 15 | TestEx1_1_ReadFrame |\n" +
				"| 1.1 | Read one frame | 15 | TestEx1_1_ReadFrame |\n",
			want: "exercise 1.1 is listed twice",
		},
		{
			name: "a row after the table ended",
			readme: "| Exercise | Title | Points | Test |\n|---|---|---|---|\n" +
				"| 1.1 | Read one frame | 15 | TestEx1_1_ReadFrame |\n\n" +
				"| 1.2 | Write one frame | 15 | TestEx1_2_WriteFrame |\n",
			want: "missing row for exercise 1.2",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckREADME(fixtureChapter, []byte(tt.readme))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("CheckREADME(%q) = %v\nwant an error containing %q", tt.readme, err, tt.want)
			}
		})
	}
}
