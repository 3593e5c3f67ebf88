// Package rubric is the course's single source of truth for grading: which
// chapters exist, which exercises each has, what each is worth and which test
// checks it.
//
// The rubric is a small JSON file, rubric.json beside this file (the points
// table), and one Markdown file of hints per chapter (hints/NN.md), all
// embedded in the package so that the grader needs nothing but its own binary:
//
//	{"chapters": [
//	  {"id": "01", "title": "Iterative discovery server",
//	   "exercises": [
//	     {"id": "1.1", "title": "Read one frame", "points": 15, "test": "TestEx1_1_ReadFrame"}
//	   ]}
//	]}
//
// An exercise may add "timeout": "90s" (a Go duration) to override the
// grader's default time limit. Its "hints" (the idea, the pitfall, the API to
// use) are what make hint shows, one more each time it is asked. The chapter READMEs repeat each chapter's
// exercises in a table; [CheckREADME] and this package's tests keep the two in
// agreement, so the rubric is edited in one place and checked everywhere else.
package rubric

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

//go:embed rubric.json
var embedded []byte

//go:embed hints/*.md
var hintFiles embed.FS

// Rubric lists the graded chapters in course order.
type Rubric struct {
	Chapters []Chapter `json:"chapters"`
}

// Chapter is one folder of the course (chapters/NN and solutions/NN) and the
// exercises graded in it.
type Chapter struct {
	ID        string     `json:"id"` // two digits, "01" … "08": the folder name
	Title     string     `json:"title"`
	Exercises []Exercise `json:"exercises"`
	Screen    Screen     `json:"screen,omitzero"`
}

// Screen is the chapter's part in the grader's screening of the student's
// files (docs/grading.md lists the rules): rules the chapter's own solution
// needs switched off, and given functions an exercise must not delegate to.
type Screen struct {
	Allow  []string `json:"allow,omitempty"`  // rule names, e.g. "unsafe"
	Forbid []Forbid `json:"forbid,omitempty"` // given code the student must write themselves
}

// Forbid is one given function that costs the listed exercises when the
// student's package refers to it.
type Forbid struct {
	Ref       string   `json:"ref"`       // import path, dot, name: "serverlab/tools/given/wire.ReadFrame"
	Exercises []string `json:"exercises"` // the exercises it costs, e.g. ["1.1"]
	Why       string   `json:"why,omitempty"`
}

// Package is the import path of the forbidden function.
func (f Forbid) Package() string {
	i := strings.LastIndexByte(f.Ref, '.')
	if i < 0 {
		return ""
	}
	return f.Ref[:i]
}

// Rules are the screening rules a rubric may allow (tools/cmd/grade screens for
// them; docs/grading.md says what each catches).
var Rules = []string{"init", "startup", "exit", "linkname", "unsafe", "cgo", "import", "args", "proc", "forbid", "practice", "size"}

// Exercise is one graded exercise: one test, run alone, worth Points when it
// passes cleanly and nothing otherwise.
type Exercise struct {
	ID      string `json:"id"` // "3.4": chapter number, dot, exercise number
	Title   string `json:"title"`
	Points  int    `json:"points"`
	Test    string `json:"test"`              // TestEx3_4_<Name>
	Timeout string `json:"timeout,omitempty"` // optional Go duration overriding the grader's default
	// NoStub, when set, says why the exercise has no `TODO(ex N.K)` of its
	// own (it checks code earlier exercises wrote); every other exercise
	// has one, which a maintainers' test checks.
	NoStub string `json:"no_stub,omitempty"`
	// Hints are shown one at a time by make hint: the idea, then the pitfall,
	// then the API to use, and last the recipe: what the stubs' bodies do,
	// step by step (the TODOs themselves say only what must be true once
	// they are written). Every exercise has all four (a test checks it); a
	// recipe covering several functions has a line for each. The course's
	// hints are prose and live in hints/NN.md (hints.go reads them); a rubric
	// read with Parse alone, a test's fixture, may carry them inline.
	Hints []string `json:"hints,omitempty"`
}

// HintKinds names the hints of an exercise, in the order they are shown.
var HintKinds = []string{"the idea", "the pitfall", "the API to use", "the recipe"}

// Load returns the rubric embedded in the grader, with each chapter's hints
// from hints/NN.md (prose lives in Markdown; rubric.json is the points table).
func Load() (*Rubric, error) {
	r, err := Parse(bytes.NewReader(embedded))
	if err != nil {
		return nil, fmt.Errorf("embedded rubric.json: %w", err)
	}
	for i := range r.Chapters {
		ch := &r.Chapters[i]
		name := "hints/" + ch.ID + ".md"
		md, err := hintFiles.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("rubric: chapter %s has no %s", ch.ID, name)
		}
		if err := ch.attachHints(name, md); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Parse reads a rubric and validates it. Unknown fields are errors: a typo
// such as "point" must not silently grade an exercise as worth nothing.
func Parse(r io.Reader) (*Rubric, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var rb Rubric
	if err := dec.Decode(&rb); err != nil {
		return nil, fmt.Errorf("decode rubric: %w", err)
	}
	if err := rb.Validate(); err != nil {
		return nil, err
	}
	return &rb, nil
}

// Chapter returns the chapter with the given id ("01").
func (r *Rubric) Chapter(id string) (Chapter, bool) {
	for _, ch := range r.Chapters {
		if ch.ID == id {
			return ch, true
		}
	}
	return Chapter{}, false
}

// MaxPoints is the most a submission can score over the whole course.
func (r *Rubric) MaxPoints() int {
	total := 0
	for _, ch := range r.Chapters {
		total += ch.MaxPoints()
	}
	return total
}

// MaxPoints is the most a submission can score in this chapter.
func (c Chapter) MaxPoints() int {
	total := 0
	for _, ex := range c.Exercises {
		total += ex.Points
	}
	return total
}

// TimeLimit is how long the exercise's test may run: its own timeout if the
// rubric gives one, def otherwise.
func (e Exercise) TimeLimit(def time.Duration) time.Duration {
	if d, err := time.ParseDuration(e.Timeout); err == nil && d > 0 {
		return d
	}
	return def
}

// RunPattern is what a student passes to go test -run to run this exercise
// alone: "Ex1_1_" for exercise 1.1.
func (e Exercise) RunPattern() string {
	return "Ex" + strings.ReplaceAll(e.ID, ".", "_") + "_"
}

var (
	chapterIDPattern  = regexp.MustCompile(`^[0-9]{2}$`)
	exerciseIDPattern = regexp.MustCompile(`^([0-9]+)\.([0-9]+)$`)
	testNamePattern   = regexp.MustCompile(`^TestEx([0-9]+)_([0-9]+)_[A-Za-z0-9_]+$`)
)

// Validate reports every problem in the rubric at once, so that whoever edits
// it fixes them in one go: ids, uniqueness, points, test names and timeouts.
func (r *Rubric) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if len(r.Chapters) == 0 {
		add("rubric has no chapters")
	}
	chapterIDs := map[string]bool{}
	exerciseIDs := map[string]bool{}
	testNames := map[string]string{} // test name → exercise id
	for _, ch := range r.Chapters {
		where := fmt.Sprintf("chapter %q", ch.ID)
		if !chapterIDPattern.MatchString(ch.ID) {
			add("%s: id must be two digits, like \"01\"", where)
		}
		if chapterIDs[ch.ID] {
			add("%s: duplicate chapter id", where)
		}
		chapterIDs[ch.ID] = true
		if strings.TrimSpace(ch.Title) == "" {
			add("%s: missing title", where)
		}
		if len(ch.Exercises) == 0 {
			add("%s: no exercises", where)
		}
		for _, rule := range ch.Screen.Allow {
			if !slices.Contains(Rules, rule) {
				add("%s: screen: unknown rule %q (rules: %s)", where, rule, strings.Join(Rules, ", "))
			}
		}
		for _, fb := range ch.Screen.Forbid {
			if fb.Package() == "" || len(fb.Exercises) == 0 {
				add("%s: screen: forbid %q needs a ref <import path>.<name> and exercises", where, fb.Ref)
			}
			for _, id := range fb.Exercises {
				if !slices.ContainsFunc(ch.Exercises, func(e Exercise) bool { return e.ID == id }) {
					add("%s: screen: forbid %q names exercise %q, which the chapter does not have", where, fb.Ref, id)
				}
			}
		}
		for _, ex := range ch.Exercises {
			for _, err := range validateExercise(ch, ex) {
				add("%s: exercise %q: %v", where, ex.ID, err)
			}
			if exerciseIDs[ex.ID] {
				add("%s: exercise %q: duplicate exercise id", where, ex.ID)
			}
			exerciseIDs[ex.ID] = true
			if other, dup := testNames[ex.Test]; dup && ex.Test != "" {
				add("%s: exercise %q: test %s is already used by exercise %s", where, ex.ID, ex.Test, other)
			}
			testNames[ex.Test] = ex.ID
		}
	}
	return errors.Join(errs...)
}

// validateExercise checks one exercise on its own; it returns every problem.
func validateExercise(ch Chapter, ex Exercise) []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	m := exerciseIDPattern.FindStringSubmatch(ex.ID)
	if m == nil {
		add("id must be <chapter>.<n>, like \"1.1\"")
	} else if chNum, err := strconv.Atoi(ch.ID); err == nil && m[1] != strconv.Itoa(chNum) {
		add("id must start with the chapter number %d", chNum)
	}
	if strings.TrimSpace(ex.Title) == "" {
		add("missing title")
	}
	if ex.Points <= 0 {
		add("points must be > 0, got %d", ex.Points)
	}
	if t := testNamePattern.FindStringSubmatch(ex.Test); t == nil {
		add("test %q must be named TestEx<n>_<m>_<Name>", ex.Test)
	} else if m != nil && (t[1] != m[1] || t[2] != m[2]) {
		add("test %s must start with TestEx%s_%s_ to match the exercise id", ex.Test, m[1], m[2])
	}
	if ex.Timeout != "" {
		if d, err := time.ParseDuration(ex.Timeout); err != nil || d <= 0 {
			add("timeout %q must be a positive Go duration such as \"90s\"", ex.Timeout)
		}
	}
	return errs
}
