package grade

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"serverlab/tools/internal/rubric"
)

// Exit statuses of the commands built on the engine (tools/cmd/grade and the
// maintainers' tools/maint/coursecheck).
const (
	ExitOK          = 0 // graded (and the requirement met)
	ExitRequirement = 1 // graded, the requirement not met
	ExitError       = 2 // could not grade: bad flags, no module, interrupted
)

// Flags are the command-line flags every command built on the engine takes:
// what to grade, where, and how.
type Flags struct {
	Root, Target, Chapters, Exercises, Rubric string
	Course, Allow, User, Overlay              string
	Timeout, Budget                           time.Duration
	Jobs                                      int
	Quiet                                     bool
}

// Register defines the flags on fs.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.Root, "root", ".", "module root")
	fs.StringVar(&f.Target, "target", "chapters", "tree to grade, relative to the root: chapters or solutions")
	fs.StringVar(&f.Chapters, "ch", "", "comma-separated chapter ids to grade, e.g. 01,03 (default: all in the rubric)")
	fs.StringVar(&f.Exercises, "ex", "", "comma-separated exercise ids to grade, e.g. 3.4,3.5 (default: all)")
	fs.StringVar(&f.Rubric, "rubric", "", "rubric file to use instead of the embedded one")
	fs.DurationVar(&f.Timeout, "timeout", 40*time.Second, "time limit per exercise, unless the rubric sets one")
	fs.DurationVar(&f.Budget, "budget", 9*time.Minute, "time limit for the whole run (0: none); exercises left are not run")
	fs.IntVar(&f.Jobs, "j", 2, "exercises run at once")
	fs.BoolVar(&f.Quiet, "q", false, "do not print progress on stderr")
	fs.StringVar(&f.Course, "course", "", `course files: "" (the release's course.sum, else git HEAD; copies from git), "checkout" (trust the checkout), or a clean course directory`)
	fs.StringVar(&f.Allow, "allow", "", "screening rules to switch off, comma-separated: "+strings.Join(rubric.Rules, ", "))
	fs.StringVar(&f.User, "user", "", "run test binaries as this unprivileged user (Unix; the grader must run as root)")
	fs.StringVar(&f.Overlay, "overlay", "", "go build -overlay JSON file merged into every build")
}

// Check reports flags that cannot work together.
func (f Flags) Check() error {
	if f.Timeout <= 0 || f.Jobs <= 0 {
		return errors.New("-timeout and -j must be positive")
	}
	if f.Budget < 0 {
		return errors.New("-budget must not be negative")
	}
	for _, r := range f.Allowed() {
		if !slices.Contains(rubric.Rules, r) {
			return fmt.Errorf("-allow %q: no such rule (rules: %s)", r, strings.Join(rubric.Rules, ", "))
		}
	}
	return nil
}

// Allowed is -allow as a list.
func (f Flags) Allowed() []string {
	var out []string
	for _, r := range strings.Split(f.Allow, ",") {
		if r = strings.TrimSpace(r); r != "" {
			out = append(out, r)
		}
	}
	return out
}

// Select is what -rubric, -ch and -ex pick: the chapters to grade, each with
// the exercises to grade.
func (f Flags) Select() ([]rubric.Chapter, error) {
	chapters, err := SelectChapters(f.Rubric, f.Chapters)
	if err != nil {
		return nil, err
	}
	return SelectExercises(chapters, f.Exercises)
}

// Options are the grading options the flags describe; progress receives the
// progress lines unless -q.
func (f Flags) Options(chapters []rubric.Chapter, progress io.Writer) (Options, error) {
	opt := Options{Root: f.Root, Target: f.Target, Chapters: chapters, Timeout: f.Timeout, Jobs: f.Jobs,
		Budget: f.Budget, Course: f.Course, Allow: f.Allowed(), Overlay: f.Overlay}
	if f.User != "" {
		var err error
		if opt.User, err = LookupUser(f.User); err != nil {
			return opt, err
		}
	}
	if !f.Quiet {
		opt.Progress = progress
	}
	return opt, nil
}

// SelectChapters loads the rubric (embedded, or from path) and picks the
// chapters named in list, in the order given; an empty list means all.
func SelectChapters(path, list string) ([]rubric.Chapter, error) {
	r, err := LoadRubric(path)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(list) == "" {
		return r.Chapters, nil
	}
	var picked []rubric.Chapter
	seen := map[string]bool{}
	for _, id := range strings.Split(list, ",") {
		id = strings.TrimSpace(id)
		if len(id) == 1 {
			id = "0" + id // -ch 3 means chapter 03
		}
		ch, ok := r.Chapter(id)
		if !ok {
			return nil, fmt.Errorf("-ch: the rubric has no chapter %q", id)
		}
		if !seen[id] {
			picked = append(picked, ch)
			seen[id] = true
		}
	}
	return picked, nil
}

// LoadRubric reads the rubric at path, or the embedded one when path is "".
func LoadRubric(path string) (*rubric.Rubric, error) {
	if path == "" {
		return rubric.Load()
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := rubric.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// SelectExercises keeps only the exercises listed (comma-separated ids such
// as "3.4,3.5") and the chapters that have one; an empty list keeps all.
func SelectExercises(chapters []rubric.Chapter, list string) ([]rubric.Chapter, error) {
	if strings.TrimSpace(list) == "" {
		return chapters, nil
	}
	want := map[string]bool{}
	for _, id := range strings.Split(list, ",") {
		if id = strings.TrimSpace(id); id != "" {
			want[id] = false
		}
	}
	var picked []rubric.Chapter
	for _, ch := range chapters {
		var exs []rubric.Exercise
		for _, ex := range ch.Exercises {
			if _, ok := want[ex.ID]; ok {
				exs = append(exs, ex)
				want[ex.ID] = true
			}
		}
		if len(exs) > 0 {
			ch.Exercises = exs
			picked = append(picked, ch)
		}
	}
	var missing []string
	for id, found := range want {
		if !found {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, fmt.Errorf("-ex: no exercise %s in the chapters graded", strings.Join(missing, ", "))
	}
	return picked, nil
}
