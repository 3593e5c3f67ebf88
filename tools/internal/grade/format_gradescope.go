package grade

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
)

// Gradescope's results.json, as its autograder specification describes it
// (https://gradescope-autograders.readthedocs.io/en/latest/specs/): a
// run_autograder script writes it to /autograder/results/results.json. The
// spec has no top-level max_score: Gradescope takes the maximum from the
// assignment, and the tests' max_score add up to it.
type gradescopeResults struct {
	Score         float64          `json:"score"`
	ExecutionTime int              `json:"execution_time"` // seconds
	Output        string           `json:"output"`
	Visibility    string           `json:"visibility"`
	Tests         []gradescopeTest `json:"tests"`
}

type gradescopeTest struct {
	Name       string  `json:"name"`
	Number     string  `json:"number"`
	Score      float64 `json:"score"`
	MaxScore   float64 `json:"max_score"`
	Status     string  `json:"status"` // "passed" or "failed"
	Output     string  `json:"output"`
	Visibility string  `json:"visibility"`
}

// writeGradescope writes one Gradescope test per exercise; its output is the
// cause and the message, and how to rerun the exercise.
func writeGradescope(w io.Writer, rep *Report) error {
	res := gradescopeResults{
		Score:         float64(rep.Points),
		ExecutionTime: int(math.Ceil(float64(rep.Duration) / 1e9)),
		Output:        strings.Join(append([]string{summary(rep)}, rep.Notes...), "\n"),
		Visibility:    "visible",
		Tests:         []gradescopeTest{},
	}
	rep.Exercises(func(ch ChapterResult, ex ExerciseResult) {
		t := gradescopeTest{
			Name:       ex.Name(ch),
			Number:     ex.ID,
			Score:      float64(ex.Points),
			MaxScore:   float64(ex.Max),
			Status:     "failed",
			Output:     ex.Detail() + "\n\nRun it alone: " + ex.RunCommand(ch),
			Visibility: "visible",
		}
		if ex.Passed {
			t.Status, t.Output = "passed", fmt.Sprintf("passed in %s", ex.Duration)
		}
		res.Tests = append(res.Tests, t)
	})
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}

// summary is a one-line account of the whole grade.
func summary(rep *Report) string {
	passed, total := 0, 0
	rep.Exercises(func(_ ChapterResult, ex ExerciseResult) {
		total++
		if ex.Passed {
			passed++
		}
	})
	return fmt.Sprintf("%s: %d/%d points; %d of %d exercises passed", rep.Target, rep.Points, rep.Max, passed, total)
}
