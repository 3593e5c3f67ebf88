// Command coursecheck runs the maintainers' checks of the course itself, on
// the grading engine (tools/internal/grade): behind make ladder, make
// mutants, make forgeries and make stress, and the samples of them in make
// test. Students never need it, and the release leaves it out.
//
// Usage:
//
//	go run ./tools/maint/coursecheck MODE [flags]
//
//	-ladder         for each chapter and k, solve exercises 1..k only and require exactly those
//	                points (-rotate: one chapter; -rungs n: n rungs of it; chosen by -seed;
//	                -rung k: only the rung with 1..k solved)
//	-mutants        grade every mutant of tools/maint/mutants (-sample n chosen by -seed s, -min 4): each must lose its points
//	-mutate         mutate each declaration a stub stands for (statements removed, operators and
//	                boundaries changed) and grade each mutant with its exercise's checks
//	                (-sample n by -seed s, -mutate-for d); survivors fail unless equivalent.txt lists them
//	-forgeries      grade every forgery of tools/maint/forgeries on the starters (each must earn nothing)
//	                and every honest change on the solutions (each must keep every point)
//	-repeat n       grade the solutions n times beside -busy n busy loops: every run must pass
//	-mirror         write chapters/ from solutions/ (make chapters: given code lives in the solution;
//	                a chapter holds only its stubs and its own files); -check only compares
//
// The grader's flags (-root, -ch, -ex, -timeout, -j, -budget, -course,
// -user, -q, -overlay, …) mean what they mean to tools/cmd/grade.
//
// Exit status: 0 the check held, 1 it did not, 2 it could not run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"serverlab/tools/internal/grade"
	"serverlab/tools/internal/rubric"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// config is the parsed command line: the grader's flags and the mode's.
type config struct {
	grade.Flags
	maint maintainerConfig
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("coursecheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c.Register(fs)
	c.maint.register(fs)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if !c.maint.enabled() {
		return c, errors.New("name a check: -ladder, -mutants, -mutate, -forgeries, -mirror or -repeat n")
	}
	return c, c.Check()
}

// run is the whole command, testable in process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return grade.ExitOK
	}
	var chapters []rubric.Chapter
	if err == nil {
		chapters, err = c.Select()
	}
	if err != nil {
		fmt.Fprintln(stderr, "coursecheck:", err)
		return grade.ExitError
	}
	return runMaintainer(ctx, c, chapters, stdout, stderr)
}
