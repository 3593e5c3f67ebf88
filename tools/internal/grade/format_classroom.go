package grade

import (
	"encoding/json"
	"io"
)

// The result a GitHub Classroom autograding runner hands to
// classroom-resources/autograding-grading-reporter (base64-encoded, in the
// step output "result"): the shape autograding-command-grader produces.
type classroomResult struct {
	Version  int             `json:"version"`
	Status   string          `json:"status"` // pass, fail or error
	MaxScore int             `json:"max_score"`
	Tests    []classroomTest `json:"tests"`
}

type classroomTest struct {
	Name     string `json:"name"`
	Status   string `json:"status"` // pass, fail or error
	Score    int    `json:"score"`
	Message  string `json:"message"`
	TestCode string `json:"test_code"`
	Filename string `json:"filename"`
	LineNo   int    `json:"line_no"`
	Duration int64  `json:"duration"` // milliseconds
}

// writeClassroom writes one Classroom test per exercise. An exercise that
// could not run at all (build error, not run) is an "error"; one that ran and
// lost its points is a "fail". The whole result passes only if every
// exercise did.
func writeClassroom(w io.Writer, rep *Report) error {
	res := classroomResult{Version: 1, Status: "pass", MaxScore: rep.Max, Tests: []classroomTest{}}
	failed, errored := false, false
	rep.Exercises(func(ch ChapterResult, ex ExerciseResult) {
		t := classroomTest{
			Name:     ex.Name(ch),
			Status:   "pass",
			Score:    ex.Points,
			Message:  ex.Detail(),
			TestCode: ex.RunCommand(ch),
			Filename: ex.File,
			LineNo:   ex.Line,
			Duration: int64(ex.Duration) / 1e6,
		}
		switch {
		case ex.Passed:
		case ex.Cause == CauseBuildError || ex.Cause == CauseNotRun:
			t.Status, errored = "error", true
		default:
			t.Status, failed = "fail", true
		}
		res.Tests = append(res.Tests, t)
	})
	switch {
	case failed:
		res.Status = "fail"
	case errored:
		res.Status = "error"
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}
