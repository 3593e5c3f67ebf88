package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"serverlab/tools/grade/rubric"
)

// Options configure one grading run.
type Options struct {
	Root     string           // the module root
	Target   string           // the tree to grade, relative to Root: "chapters" or "solutions"
	Chapters []rubric.Chapter // what to grade, in order
	Timeout  time.Duration    // per exercise, unless the rubric says otherwise
	Jobs     int              // exercises run at once
	Progress io.Writer        // one line per graded chapter; nil for none
	Overlay  string           // a go build -overlay JSON file merged into every build; "" for none
}

// job is one exercise to run and the result it fills in.
type job struct {
	exercise
	root   string // the module root, absolute
	result *ExerciseResult
	done   *sync.WaitGroup // the chapter's outstanding exercises
}

// Grade grades the chosen chapters. Chapters compile one after the other (the
// build cache is shared, and the compiler already uses every core), while
// Jobs workers run the exercises of the chapters already built. The only
// error is the grader's own failure (e.g. an interrupt): everything a
// submission can get wrong is a cause in the report.
func Grade(ctx context.Context, opt Options) (*Report, error) {
	start := time.Now()
	root, err := filepath.Abs(opt.Root)
	if err != nil {
		return nil, err
	}
	module, err := modulePath(root)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "serverlab-grade-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)

	target := path.Clean(filepath.ToSlash(opt.Target))
	rep := newReport(target, module, opt.Chapters)
	rn := newRunner(ctx, root)
	jobs := make(chan job)
	var workers, chapters sync.WaitGroup
	for range max(opt.Jobs, 1) {
		workers.Go(func() {
			for j := range jobs {
				runJob(ctx, rn, j)
			}
		})
	}

	var buildErr error
	for i, spec := range opt.Chapters {
		ch := &rep.Chapters[i]
		chStart := time.Now()
		pending, err := buildAndQueue(ctx, root, tmp, opt.Overlay, spec, ch, opt.Timeout, jobs)
		if err != nil {
			buildErr = err
			break
		}
		chapters.Go(func() {
			pending.Wait()
			ch.Duration = Seconds(time.Since(chStart))
			reportProgress(opt.Progress, ch)
		})
	}
	close(jobs)
	workers.Wait()
	chapters.Wait()
	if buildErr != nil {
		return nil, buildErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep.total()
	rep.Duration = Seconds(time.Since(start))
	return rep, nil
}

// newReport lays out the report before anything runs, every exercise at zero
// out of its rubric points: the maximum is known even for a chapter that
// never compiles.
func newReport(target, module string, chapters []rubric.Chapter) *Report {
	rep := &Report{Target: target}
	for _, ch := range chapters {
		dir := path.Join(target, ch.ID)
		cr := ChapterResult{ID: ch.ID, Title: ch.Title, Dir: dir, Package: module + "/" + dir}
		for _, ex := range ch.Exercises {
			cr.Exercises = append(cr.Exercises, ExerciseResult{
				ID: ex.ID, Title: ex.Title, Test: ex.Test, Pattern: ex.RunPattern(),
				Max: ex.Points, Cause: CauseNotRun,
			})
		}
		rep.Chapters = append(rep.Chapters, cr)
	}
	rep.total()
	return rep
}

// buildAndQueue compiles one chapter and queues its exercises; if it does not
// compile, every exercise gets the build error instead. The returned group is
// done when all of the chapter's exercises are.
func buildAndQueue(ctx context.Context, root, tmp, overlay string, spec rubric.Chapter, ch *ChapterResult, timeout time.Duration, jobs chan<- job) (*sync.WaitGroup, error) {
	pending := &sync.WaitGroup{}
	binary := filepath.Join(tmp, ch.ID+".test")
	failure, err := buildChapter(ctx, root, ch.Dir, binary, overlay)
	if err != nil {
		return nil, err
	}
	if failure != "" {
		ch.BuildError = failure
		for i := range ch.Exercises {
			ch.Exercises[i].Cause, ch.Exercises[i].Message = CauseBuildError, failure
		}
		return pending, nil
	}
	positions := findTests(root, ch.Dir)
	for i := range ch.Exercises {
		ex := &ch.Exercises[i]
		if pos, ok := positions[ex.Test]; ok {
			ex.File, ex.Line = pos.file, pos.line
		}
		pending.Add(1)
		j := job{
			exercise: exercise{
				binary:  binary,
				pkgDir:  filepath.Join(root, filepath.FromSlash(ch.Dir)),
				pkg:     ch.Package,
				test:    ex.Test,
				timeout: spec.Exercises[i].TimeLimit(timeout),
			},
			root:   root,
			result: ex,
			done:   pending,
		}
		select {
		case jobs <- j:
		case <-ctx.Done():
			pending.Done()
			return pending, ctx.Err()
		}
	}
	return pending, nil
}

// runJob runs one exercise and records its grade.
func runJob(ctx context.Context, rn *runner, j job) {
	defer j.done.Done()
	res := j.result
	run, wall, err := rn.run(ctx, j.exercise)
	if err != nil {
		if ctx.Err() == nil {
			res.Cause, res.Message = CauseNotRun, "the grader could not run the test: "+err.Error()
		}
		return
	}
	out := Classify(run)
	// Paths in stack traces, relative to the module root, read as the
	// student's own: chapters/01/server.go:42.
	res.Cause, res.Message = out.Cause, strings.ReplaceAll(out.Message, j.root+string(filepath.Separator), "")
	res.Duration = Seconds(wall)
	if out.Elapsed > 0 {
		res.Duration = Seconds(out.Elapsed)
	}
	if out.Cause == "" {
		res.Passed, res.Points = true, res.Max
	}
}

func reportProgress(w io.Writer, ch *ChapterResult) {
	if w == nil {
		return
	}
	points, max := 0, 0
	for _, ex := range ch.Exercises {
		points += ex.Points
		max += ex.Max
	}
	status := ""
	if ch.BuildError != "" {
		status = " (build error)"
	}
	fmt.Fprintf(w, "grade: %s %s: %d/%d%s in %s\n", ch.ID, ch.Title, points, max, status, ch.Duration)
}
