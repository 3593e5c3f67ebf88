package grade

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
)

// Cause says why an exercise lost its points. Exactly one cause is given per
// lost exercise; when several apply, the first in this list wins, because it
// is the one that explains the others (a panicking test also "fails").
type Cause string

const (
	CauseBuildError Cause = "build error" // the chapter's tests do not compile (or the chapter is missing)
	CauseIntegrity  Cause = "integrity"   // the submission breaks a rule of the grader (screening, course files)
	CauseTimeout    Cause = "timeout"     // the test hung: its time limit or the course watchdog stopped it
	CausePanic      Cause = "panic"       // the test binary crashed (panic or fatal error)
	CauseRace       Cause = "race"        // the race detector reported a data race
	CauseLeak       Cause = "leak"        // goroutines outlived the test
	CauseFailed     Cause = "failed"      // the test ran and failed
	CauseNotRun     Cause = "not run"     // the test never ran: missing from the binary, skipped, or no time left
	CauseExited     Cause = "exited"      // the process exited while the test ran (os.Exit, log.Fatal)
)

// Report is the grader's complete result: the model every output format is
// written from, and the -format json output as is.
type Report struct {
	Target   string          `json:"target"` // the graded tree, "chapters" or "solutions"
	Points   int             `json:"points"`
	Max      int             `json:"max"`
	Duration Seconds         `json:"duration_s"`
	Started  time.Time       `json:"started,omitzero"`
	Notes    []string        `json:"notes,omitempty"` // how the grade was made: course files, screening, platform
	Chapters []ChapterResult `json:"chapters"`
}

// ChapterResult is one chapter's grade.
type ChapterResult struct {
	ID         string           `json:"id"`
	Title      string           `json:"title"`
	Dir        string           `json:"dir"`     // the package directory, relative to the module root: "chapters/01"
	Package    string           `json:"package"` // its import path
	Points     int              `json:"points"`
	Max        int              `json:"max"`
	Track      string           `json:"track"` // "guided" or "open" (see track.go)
	BuildError string           `json:"build_error,omitempty"`
	Integrity  []string         `json:"integrity,omitempty"` // what screening found
	Duration   Seconds          `json:"duration_s"`          // compiling plus running every exercise
	Exercises  []ExerciseResult `json:"exercises"`
}

// ExerciseResult is one exercise's grade: all its points for a clean pass,
// none otherwise, with the cause and the relevant output.
type ExerciseResult struct {
	ID       string  `json:"id"`
	Title    string  `json:"title"`
	Test     string  `json:"test"`
	Pattern  string  `json:"run_pattern"` // for go test -run
	File     string  `json:"file,omitempty"`
	Line     int     `json:"line,omitempty"`
	Points   int     `json:"points"`
	Max      int     `json:"max"`
	Passed   bool    `json:"passed"`
	Cause    Cause   `json:"cause,omitempty"`
	Message  string  `json:"message,omitempty"`
	Duration Seconds `json:"duration_s"`
}

// Seconds is a duration that reads well in JSON: seconds, to the millisecond.
type Seconds time.Duration

// MarshalJSON writes the duration as seconds.
func (s Seconds) MarshalJSON() ([]byte, error) {
	return json.Marshal(math.Round(time.Duration(s).Seconds()*1000) / 1000)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Seconds) UnmarshalJSON(b []byte) error {
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*s = Seconds(time.Duration(f * float64(time.Second)))
	return nil
}

// String formats the duration for people: "0.02s", "12.3s".
func (s Seconds) String() string {
	d := time.Duration(s)
	if d < 10*time.Second {
		return fmt.Sprintf("%.2fs", d.Seconds())
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}

// Status is what a report shows for an exercise: "passed", or its cause.
func (e ExerciseResult) Status() string {
	if e.Passed {
		return "passed"
	}
	return string(e.Cause)
}

// Name is how the exercise is named outside the text table, where it must be
// unique and say where it belongs: "01 · 1.1 Read one frame".
func (e ExerciseResult) Name(ch ChapterResult) string {
	return ch.ID + " · " + e.ID + " " + e.Title
}

// Detail is the cause, then the message on the lines below it: what a
// student reads about a lost exercise.
func (e ExerciseResult) Detail() string {
	if e.Passed {
		return "passed"
	}
	if e.Message == "" {
		return string(e.Cause)
	}
	return string(e.Cause) + ":\n" + e.Message
}

// RunCommand is how a student reruns the exercise alone, to see all of it.
func (e ExerciseResult) RunCommand(ch ChapterResult) string {
	return "go test -race ./" + ch.Dir + "/... -run " + e.Pattern
}

// total adds up the chapters' points.
func (r *Report) total() {
	r.Points, r.Max = 0, 0
	for i := range r.Chapters {
		ch := &r.Chapters[i]
		ch.Points, ch.Max = 0, 0
		for _, ex := range ch.Exercises {
			ch.Points += ex.Points
			ch.Max += ex.Max
		}
		r.Points += ch.Points
		r.Max += ch.Max
	}
}

// Exercises calls fn for every exercise, in course order.
func (r *Report) Exercises(fn func(ch ChapterResult, ex ExerciseResult)) {
	for _, ch := range r.Chapters {
		for _, ex := range ch.Exercises {
			fn(ch, ex)
		}
	}
}

// The reasons -require all gives, last on the grader's output, where a CI
// log that keeps only its tail still shows why the solutions lost a point:
// the first lines of the first few failures.
const (
	requireShown = 3
	requireLines = 4
)

// Require checks the report against a -require mode and says why it does not
// meet it:
//
//   - "all": every exercise passed (the reference solutions);
//   - "none": every exercise scored 0 with cause exactly "failed" (the
//     untouched starters: they must fail cleanly, never crash, hang or fail to
//     build);
//   - "": no requirement.
func (r *Report) Require(mode string) error {
	var bad []string
	switch mode {
	case "":
		return nil
	case "all":
		var why strings.Builder
		r.Exercises(func(ch ChapterResult, ex ExerciseResult) {
			if !ex.Passed {
				bad = append(bad, fmt.Sprintf("%s (%s)", ex.ID, ex.Cause))
				if len(bad) <= requireShown {
					writeIndented(&why, ex.ID+": "+inert(FirstLines([]byte(ex.Message), requireLines)), "  ", requireLines+1)
				}
			}
		})
		if len(bad) > 0 {
			return fmt.Errorf("-require all: %d exercise(s) did not pass: %s\n%s", len(bad), strings.Join(bad, ", "),
				strings.TrimRight(why.String(), "\n"))
		}
	case "none":
		r.Exercises(func(ch ChapterResult, ex ExerciseResult) {
			if ex.Passed || ex.Cause != CauseFailed {
				bad = append(bad, fmt.Sprintf("%s (%s)", ex.ID, ex.Status()))
			}
		})
		if len(bad) > 0 {
			return fmt.Errorf("-require none: every exercise must fail cleanly (cause %q), but %d did not: %s",
				CauseFailed, len(bad), strings.Join(bad, ", "))
		}
	default:
		return fmt.Errorf("unknown -require mode %q (want \"\", \"all\" or \"none\")", mode)
	}
	return nil
}
