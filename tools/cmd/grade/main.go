// Command grade is the course's grader, behind `make grade`.
//
// It refuses, before building, any reference in the student's chapter tree
// outside the chapter's allow-list (the gate, tools/internal/grade/gate.go),
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
// The engine is tools/internal/grade; the maintainers' checks of the course
// itself (ladder, mutants, forgeries, stress) are tools/maint/coursecheck.
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
	"strings"
	"syscall"

	"serverlab/tools/internal/grade"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// config is the parsed command line: the engine's flags and the report's.
type config struct {
	grade.Flags
	format, out, require string
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("grade", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c.Register(fs)
	fs.StringVar(&c.format, "format", "text", "report format: "+grade.FormatNames())
	fs.StringVar(&c.out, "o", "", "write the report to this file (default: stdout)")
	fs.StringVar(&c.require, "require", "", `exit 1 unless "all" exercises passed, or "none" did (each failed cleanly)`)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if c.require != "" && c.require != "all" && c.require != "none" {
		return c, fmt.Errorf("-require %q: want all or none", c.require)
	}
	return c, c.Check()
}

// run is the whole command, testable in process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return grade.ExitOK
	}
	if err != nil {
		fmt.Fprintln(stderr, "grade:", err)
		return grade.ExitError
	}
	rep, err := gradeRun(ctx, c, stderr)
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "grade: interrupted; no report written")
		return grade.ExitError
	}
	if err == nil {
		err = writeReport(c.out, stdout, c.format, rep)
	}
	if err != nil {
		fmt.Fprintln(stderr, "grade:", err)
		return grade.ExitError
	}
	if err := rep.Require(c.require); err != nil {
		fmt.Fprintln(stderr, "grade:", err)
		return grade.ExitRequirement
	}
	return grade.ExitOK
}

// gradeRun grades what the flags select.
func gradeRun(ctx context.Context, c config, stderr io.Writer) (*grade.Report, error) {
	if _, err := grade.LookupFormat(c.format); err != nil {
		return nil, err
	}
	chapters, err := c.Select()
	if err != nil {
		return nil, err
	}
	opt, err := c.Options(chapters, stderr)
	if err != nil {
		return nil, err
	}
	return grade.Grade(ctx, opt)
}

// writeReport writes the report to the -o file, or to stdout. The file is
// written whole or not at all: to a temporary file beside it, then renamed,
// after every process the tests started is gone (Grade sweeps them), so
// nothing can write into it half-way or after.
func writeReport(path string, stdout io.Writer, format string, rep *grade.Report) error {
	write, err := grade.LookupFormat(format)
	if err != nil {
		return err
	}
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
