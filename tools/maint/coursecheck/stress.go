package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"serverlab/tools/internal/grade"
	"serverlab/tools/internal/rubric"
)

// Stress (make stress): the reference solutions must pass every run, also
// on a loaded machine. -repeat N grades the solutions N times, -j exercises
// at once, beside -busy busy loops: child processes of the grader's own
// binary that spin until the runs are over (goroutines would not do: the
// grader's GOMAXPROCS caps how many of them spin at once).

// spinFlag is the hidden flag a busy loop child is started with.
const spinFlag = "-stress-spin"

// runStress is -repeat: N graded runs of the solutions; exit 1 unless every
// run passed every exercise.
// stressExcerpt is how many lines of a failure's message a stress run shows.
const stressExcerpt = 60

func runStress(ctx context.Context, c config, chapters []rubric.Chapter, stdout, stderr io.Writer) int {
	if c.maint.spin {
		spin(ctx)
		return grade.ExitOK
	}
	loops := &busyLoops{ctx: ctx, n: c.maint.busy}
	defer loops.stop()
	target := c.maint.solutions
	fmt.Fprintf(stdout, "stress: %d runs of %s, -j %d, beside %d busy loops (from the first exercise on, once its chapter is built)\n",
		c.maint.repeat, target, c.Jobs, c.maint.busy)
	passed := 0
	start := time.Now()
	for i := 1; i <= c.maint.repeat; i++ {
		runStart := time.Now()
		rep, err := grade.Grade(ctx, grade.Options{Root: c.Root, Target: target, Chapters: chapters, Timeout: c.Timeout, Jobs: c.Jobs, Overlay: c.Overlay,
			Course: c.Course, Running: loops.start})
		if err == nil {
			err = loops.err
		}
		if err != nil {
			fmt.Fprintln(stderr, "coursecheck -repeat:", err)
			return grade.ExitError
		}
		var lost, why []string
		rep.Exercises(func(ch grade.ChapterResult, ex grade.ExerciseResult) {
			if !ex.Passed {
				lost = append(lost, fmt.Sprintf("%s (%s)", ex.ID, ex.Cause))
				why = append(why, indent(fmt.Sprintf("%s: %s", ex.ID, grade.FirstLines([]byte(ex.Message), stressExcerpt)), "      "))
			}
		})
		if len(lost) == 0 {
			passed++
		}
		fmt.Fprintf(stdout, "  run %d/%d: %d/%d points in %s", i, c.maint.repeat, rep.Points, rep.Max, grade.Seconds(time.Since(runStart)))
		if len(lost) > 0 {
			fmt.Fprintf(stdout, "; lost %s", strings.Join(lost, "; "))
		}
		fmt.Fprintln(stdout)
		// A failure that shows up once in twenty runs must be readable
		// from this run's output: it may not come back when re-run.
		for _, w := range why {
			fmt.Fprintln(stdout, w)
		}
	}
	fmt.Fprintf(stdout, "stress: %d/%d runs passed in %s\n", passed, c.maint.repeat, grade.Seconds(time.Since(start)))
	if passed < c.maint.repeat {
		return grade.ExitRequirement
	}
	return grade.ExitOK
}

// busyLoops are -busy's loops. They start as the first exercise starts
// (grade.Options.Running), not before the build: under 16 loops the
// compiler and the linker get an eighth of the machine, and make test's
// busy-loop check spent half its time linking, which is not what it tests.
type busyLoops struct {
	ctx    context.Context
	n      int
	once   sync.Once
	stopFn func()
	err    error // why they could not start
}

func (b *busyLoops) start() {
	b.once.Do(func() {
		if b.n > 0 {
			b.stopFn, b.err = startBusyLoops(b.ctx, b.n)
		}
	})
}

func (b *busyLoops) stop() {
	b.once.Do(func() {}) // none may start after this
	if b.stopFn != nil {
		b.stopFn()
	}
}

// startBusyLoops starts n busy children and returns what stops them.
func startBusyLoops(ctx context.Context, n int) (stop func(), err error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("busy loops: %w", err)
	}
	var cmds []*exec.Cmd
	stop = func() {
		for _, cmd := range cmds {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}
	for range n {
		cmd := exec.CommandContext(ctx, self, "-repeat", "1", spinFlag)
		if err := cmd.Start(); err != nil {
			stop()
			return nil, fmt.Errorf("busy loops: %w", err)
		}
		cmds = append(cmds, cmd)
	}
	return stop, nil
}

// spin burns one core until ctx is done, the process is killed, or its
// parent is gone (a grader killed with SIGKILL must not leave busy loops
// behind on a shared machine: the orphan's parent pid changes).
func spin(ctx context.Context) {
	parent := os.Getppid()
	for n := 0; ; n++ {
		if n%(1<<22) == 0 && (ctx.Err() != nil || os.Getppid() != parent) {
			return
		}
	}
}
