// Command grade is the course's grader, behind `make grade`.
//
// It screens the student's files of each chapter (to teach: see screen.go),
// compiles each chapter twice with the course's own copies of the test
// wiring, suites, given code and go.mod (course.sum or git HEAD) — the
// subject, the student's package with the race detector, and the judge, the
// wiring without any of the student's files (tests/judge) — runs every graded
// exercise alone with a time limit as a judge driving a subject, the subject
// in a sandbox (sandbox_linux.go), and awards an exercise's points only for a
// pass the judge reported, with no leak, race, crash or timeout. (Where the
// platform cannot pass descriptors, Windows, the test binary runs alone and
// a pass needs the harness's completion record.)
// Every lost point has a stated cause: build error, integrity, timeout,
// exited, panic, race, leak, failed, not run. The rubric (which exercises,
// worth what, checked by which test, screened how) is embedded from
// tools/internal/rubric. docs/grading.md says what the grader trusts, and why.
//
// Usage:
//
//	go run ./tools/cmd/grade [flags]
//
//	-root dir       module root (default ".")
//	-target tree    tree to grade: chapters (default) or solutions
//	-ch 01,03       chapters to grade (default: every chapter in the rubric)
//	-ex 3.4,3.5     grade only these exercises (and so only their chapters)
//	-format f       text (default), gradescope, classroom, junit or json
//	-o file         write the report to file instead of stdout
//	-timeout d      time limit per exercise, unless the rubric sets one (default 40s)
//	-budget d       time limit for the whole run (default 9m); what is left is "not run"
//	-j n            exercises run at once (default 2)
//	-course src     where the course's own files come from: "" (the release's course.sum,
//	                else git HEAD; copies from git), "checkout" (trust the checkout:
//	                maintainers), or a clean course directory
//	-allow rules    screening rules to switch off, comma-separated (e.g. unsafe)
//	-user name      run the test binaries as this unprivileged user (Unix, grader as root)
//	-rubric file    grade with this rubric instead of the embedded one
//	-require mode   all: exit 1 unless every exercise passed;
//	                none: exit 1 unless every exercise failed cleanly (cause "failed")
//	-q              no progress lines on stderr
//	-overlay file   a go build -overlay JSON file merged into every build (for maintainers' tools)
//
// The maintainers' checks of the course itself (see maintainer.go):
//
//	-ladder         for each chapter and k, solve exercises 1..k only and require exactly those
//	                points (-rotate: one chapter; -rungs n: n rungs of it; chosen by -seed)
//	-mutants        grade every mutant of tests/mutants (-sample n chosen by -seed s, -min 4): each must lose its points
//	-repeat n       grade the solutions n times beside -busy n busy loops: every run must pass
//
// Exit status: 0 graded (and the requirement met), 1 requirement not met,
// 2 the grader could not grade (bad flags, no module, interrupted).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"serverlab/tools/internal/rubric"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Exit statuses.
const (
	exitOK          = 0
	exitRequirement = 1
	exitError       = 2
)

// config is the parsed command line.
type config struct {
	root, target, chapters, format, out, rubric, require string
	timeout                                              time.Duration
	jobs                                                 int
	quiet                                                bool
	budget                                               time.Duration
	course, allow, user                                  string
	exercises, overlay                                   string
	maint                                                maintainerConfig
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("grade", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.root, "root", ".", "module root")
	fs.StringVar(&c.target, "target", "chapters", "tree to grade, relative to the root: chapters or solutions")
	fs.StringVar(&c.chapters, "ch", "", "comma-separated chapter ids to grade, e.g. 01,03 (default: all in the rubric)")
	fs.StringVar(&c.format, "format", "text", "report format: "+formatNames())
	fs.StringVar(&c.out, "o", "", "write the report to this file (default: stdout)")
	fs.DurationVar(&c.timeout, "timeout", 40*time.Second, "time limit per exercise, unless the rubric sets one")
	fs.IntVar(&c.jobs, "j", 2, "exercises run at once")
	fs.StringVar(&c.rubric, "rubric", "", "rubric file to use instead of the embedded one")
	fs.StringVar(&c.require, "require", "", `exit 1 unless "all" exercises passed, or "none" did (each failed cleanly)`)
	fs.BoolVar(&c.quiet, "q", false, "do not print progress on stderr")
	fs.DurationVar(&c.budget, "budget", 9*time.Minute, "time limit for the whole run (0: none); exercises left are not run")
	fs.StringVar(&c.course, "course", "", `course files: "" (the release's course.sum, else git HEAD; copies from git), "checkout" (trust the checkout), or a clean course directory`)
	fs.StringVar(&c.allow, "allow", "", "screening rules to switch off, comma-separated: "+strings.Join(rubric.Rules, ", "))
	fs.StringVar(&c.user, "user", "", "run test binaries as this unprivileged user (Unix; the grader must run as root)")
	fs.StringVar(&c.exercises, "ex", "", "comma-separated exercise ids to grade, e.g. 3.4,3.5 (default: all)")
	fs.StringVar(&c.overlay, "overlay", "", "go build -overlay JSON file merged into every build")
	c.maint.register(fs)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if c.timeout <= 0 || c.jobs <= 0 {
		return c, errors.New("-timeout and -j must be positive")
	}
	if c.require != "" && c.require != "all" && c.require != "none" {
		return c, fmt.Errorf("-require %q: want all or none", c.require)
	}
	if c.budget < 0 {
		return c, errors.New("-budget must not be negative")
	}
	for _, r := range c.allowed() {
		if !slices.Contains(rubric.Rules, r) {
			return c, fmt.Errorf("-allow %q: no such rule (rules: %s)", r, strings.Join(rubric.Rules, ", "))
		}
	}
	return c, nil
}

// allowed is -allow as a list.
func (c config) allowed() []string {
	var out []string
	for _, r := range strings.Split(c.allow, ",") {
		if r = strings.TrimSpace(r); r != "" {
			out = append(out, r)
		}
	}
	return out
}

// run is the whole command, testable in process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintln(stderr, "grade:", err)
		return exitError
	}
	write, err := lookupFormat(c.format)
	if err != nil {
		fmt.Fprintln(stderr, "grade:", err)
		return exitError
	}
	chapters, err := selectChapters(c.rubric, c.chapters)
	if err == nil {
		chapters, err = selectExercises(chapters, c.exercises)
	}
	if err != nil {
		fmt.Fprintln(stderr, "grade:", err)
		return exitError
	}
	if c.maint.enabled() {
		return runMaintainer(ctx, c, chapters, stdout, stderr)
	}
	opt := Options{Root: c.root, Target: c.target, Chapters: chapters, Timeout: c.timeout, Jobs: c.jobs,
		Budget: c.budget, Course: c.course, Allow: c.allowed(), Overlay: c.overlay}
	if c.user != "" {
		if opt.User, err = lookupUser(c.user); err != nil {
			fmt.Fprintln(stderr, "grade:", err)
			return exitError
		}
	}
	if !c.quiet {
		opt.Progress = stderr
	}
	rep, err := Grade(ctx, opt)
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "grade: interrupted; no report written")
		return exitError
	}
	if err != nil {
		fmt.Fprintln(stderr, "grade:", err)
		return exitError
	}
	if err := writeReport(c.out, stdout, write, rep); err != nil {
		fmt.Fprintln(stderr, "grade:", err)
		return exitError
	}
	if err := rep.Require(c.require); err != nil {
		fmt.Fprintln(stderr, "grade:", err)
		return exitRequirement
	}
	return exitOK
}

// selectChapters loads the rubric (embedded, or from path) and picks the
// chapters named in list, in the order given; an empty list means all.
func selectChapters(path, list string) ([]rubric.Chapter, error) {
	r, err := loadRubric(path)
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

func loadRubric(path string) (*rubric.Rubric, error) {
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

// writeReport writes the report to the -o file, or to stdout. The file is
// written whole or not at all: to a temporary file beside it, then renamed,
// after every process the tests started is gone (Grade sweeps them), so
// nothing can write into it half-way or after.
func writeReport(path string, stdout io.Writer, write formatter, rep *Report) error {
	if path == "" {
		return write(stdout, rep)
	}
	if info, err := os.Stat(path); err == nil && !info.Mode().IsRegular() {
		// A device or a pipe (-o /dev/null, -o /dev/stdout): renaming over
		// it would replace it; write into it instead.
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		if err := write(f, rep); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // a no-op after the rename
	if err := write(f, rep); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
