package grade

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/internal/rubric"
)

// Options configure one grading run.
type Options struct {
	Root     string           // the module root
	Target   string           // the tree to grade, relative to Root: "chapters" or "solutions"
	Chapters []rubric.Chapter // what to grade, in order
	Timeout  time.Duration    // per exercise, unless the rubric says otherwise
	Jobs     int              // exercises run at once
	Progress io.Writer        // one line per graded chapter; nil for none
	Budget   time.Duration    // the whole run's time; 0 for no limit
	Course   string           // where the course's own files come from: "" (course.sum or git HEAD), "checkout" or a directory
	Allow    []string         // screening rules switched off for every chapter (-allow)
	User     *Credential      // run test binaries as this user; nil: as the grader
	Overlay  string           // a go build -overlay JSON file merged into every build; "" for none
	// FailFast ends each exercise at its first failing check (go test's
	// -failfast). A mutant needs one failing check to be killed, and the
	// rest of its exercise would only cost time; a student's report needs
	// every check, so grade and make grade never set it.
	FailFast bool
	// Running, if set, is called once, as the first exercise starts: after
	// its chapter is built. coursecheck's -busy starts its busy loops then,
	// so that they load the checks, not the compiler and the linker.
	Running func()
}

// job is one exercise to run and the result it fills in.
type job struct {
	exercise
	limit    time.Duration // the exercise's time limit on a quiet machine
	again    float64       // 2 when run again alone after a timeout, else 1
	root     string        // the module root, absolute
	result   *ExerciseResult
	done     *sync.WaitGroup // the chapter's outstanding exercises
	deadline time.Time       // the budget's end; zero for none
	budget   time.Duration
}

// Grade grades the chosen chapters. Chapters compile one after the other (the
// build cache is shared, and the compiler already uses every core), while
// Jobs workers run the exercises of the chapters already built. The only
// error is the grader's own failure (e.g. an interrupt): everything a
// submission can get wrong is a cause in the report.
//
// Every chapter is judged: the judge and the subject are two processes, and
// that needs Unix sockets that carry descriptors (Linux, macOS). Elsewhere
// Grade refuses (ErrPlatform): on Windows, students practise with go test
// and get official grades in WSL or the course's dev container.
func Grade(ctx context.Context, opt Options) (*Report, error) {
	if !judged {
		return nil, ErrPlatform
	}
	start := time.Now()
	root, err := filepath.Abs(opt.Root)
	if err != nil {
		return nil, err
	}
	// A go.mod the grader refuses to read (a link, a huge file) is there:
	// the course's copy replaces it (newPristine), and the report says so.
	if _, err := modulePath(root, ""); err != nil && !isRefused(err) {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "serverlab-grade-")
	if err != nil {
		return nil, err
	}
	defer removeTree(tmp) // chmod's its way down: the subject's r-x folders too
	pr := newPristine(opt.Course, root, tmp)
	// The module path is the course's go.mod's, not the checkout's: screening
	// must know which imports are the course's.
	module, err := modulePath(root, pr.modfile())
	if err != nil {
		return nil, err
	}

	_ = becomeSubreaper() // best effort: the sweeps still kill each run's process group
	defer sweepOrphans()
	var deadline time.Time
	if opt.Budget > 0 {
		deadline = start.Add(opt.Budget)
	}

	target := path.Clean(filepath.ToSlash(opt.Target))
	rep := newReport(target, module, opt.Chapters)
	rep.setTracks(root)
	rep.Started = start
	user, userNote := studentUser(opt.User)
	if opt.User == nil && user != nil && !othersMayEnter(root) {
		// The default user could not even enter the checkout: run as the
		// grader, without capabilities, in the sandbox if there is one.
		user, userNote = nil, "the checkout is not open to other users (a folder on its path lacks o+x): "+
			"the students' code runs as the grader's user; make it readable, or pass -user"
	}
	if userNote != "" {
		rep.Notes = append(rep.Notes, userNote)
	}
	rn := newRunner(ctx, root, tmp, user)
	rn.failFast = opt.FailFast
	if rn.user != nil {
		// The binaries, written here, must be the user's to run.
		_ = os.Chmod(tmp, 0o755)
	}
	problem := checkCgo(ctx, root)
	if err := ctx.Err(); err != nil {
		return nil, err // interrupted: not a missing Go
	}
	if problem != "" {
		rep.Notes = append(rep.Notes, problem)
		for i := range rep.Chapters {
			for j := range rep.Chapters[i].Exercises {
				ex := &rep.Chapters[i].Exercises[j]
				ex.Cause, ex.Message = CauseNotRun, problem
			}
		}
		rep.makeInert()
		rep.Duration = Seconds(time.Since(start))
		return rep, nil
	}
	extra, err := ReadOverlay(opt.Overlay)
	if err != nil {
		return nil, err
	}
	if len(extra) > 0 {
		// The judge reads the chapter's files on disk to say which earlier
		// exercises are still their stubs (testkit); under an overlay what
		// runs is not what is on disk, and the note would be wrong.
		rn.env = append(rn.env, testkit.StubNotesEnv+"=off")
	}
	b := builder{root: root, tmp: tmp, module: module, pristine: pr, allow: opt.Allow, deadline: deadline, budget: opt.Budget, extra: extra}
	b.scale = busyScale()
	jobs := make(chan job)
	var workers, chapters sync.WaitGroup
	var retryMu sync.Mutex
	var retries []job
	var running sync.Once
	for range max(opt.Jobs, 1) {
		workers.Go(func() {
			for j := range jobs {
				if opt.Running != nil {
					running.Do(opt.Running)
				}
				if retry := runJob(ctx, rn, j); retry && opt.Jobs > 1 {
					retryMu.Lock()
					retries = append(retries, j)
					retryMu.Unlock()
				}
			}
		})
	}

	warnColdBuild(ctx, opt.Progress, root, target, opt.Chapters)
	var buildErr error
	for _, i := range longestFirst(chapterLimits(opt.Chapters, opt.Timeout)) {
		spec := opt.Chapters[i]
		ch := &rep.Chapters[i]
		chStart := time.Now()
		pending, err := b.buildAndQueue(ctx, spec, ch, opt.Timeout, jobs)
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
	rep.Notes = append(rep.Notes, rerunAlone(ctx, rn, retries)...)
	if most, load := rn.busiest(); most > 1 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the machine was busy (load up to %.1f on %d cores): the checks' waits and time limits were up to %.1f times as long",
			load, runtime.NumCPU(), most))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sweepOrphans() // nothing the students' code started outlives grading
	rep.Notes = append(pr.describe(), rep.Notes...)
	rep.total()
	rep.makeInert()
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

// longestFirst is the order to start things in, given their time limits:
// the longest first, ties in the rubric's order. The rubric gives a long
// limit only to an exercise that takes long; started last, it would run alone
// at the end of the run while the other workers idle (chapter 08's 8.5 ran on
// for about 50 s).
func longestFirst(limits []time.Duration) []int {
	order := make([]int, len(limits))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(limits[b], limits[a]) })
	return order
}

// exerciseLimits are a chapter's exercises' time limits.
func exerciseLimits(ch rubric.Chapter, def time.Duration) []time.Duration {
	limits := make([]time.Duration, len(ch.Exercises))
	for i, ex := range ch.Exercises {
		limits[i] = ex.TimeLimit(def)
	}
	return limits
}

// chapterLimits are the chapters' longest exercise time limits.
func chapterLimits(chapters []rubric.Chapter, def time.Duration) []time.Duration {
	limits := make([]time.Duration, len(chapters))
	for i, ch := range chapters {
		limits[i] = slices.Max(append(exerciseLimits(ch, def), 0))
	}
	return limits
}

// rescale sets the job's waits and time limit from the machine's load as it
// starts, not once for the whole run: the spike of the grader's own builds
// (or a neighbour's) must not stretch every later exercise's waits, and a
// load that comes later must still be met.
func (j *job) rescale(scale float64) {
	j.scale = max(scale, 1) * max(j.again, 1)
	j.timeout = scaled(j.limit, j.scale)
}

// maxLimitExtensions is how many more time limits an exercise whose
// processes were starved of a processor gets (testkit.LimitEnv): the
// load-scaled limit stops growing at 4 times, and beside sixteen busy loops
// on two cores an exercise gets about a twelfth of a core.
const maxLimitExtensions = 2

// builder builds chapters: screening, the course's files, the compiler.
type builder struct {
	root, tmp, module string
	pristine          *pristine
	allow             []string
	deadline          time.Time
	budget            time.Duration
	extra             map[string]string // Options.Overlay's replacements: the maintainers' ladder and mutants
	scale             float64           // the checks' waits, multiplied on a busy machine
}

// buildAndQueue screens and compiles one chapter and queues its exercises;
// if it cannot be built, every exercise gets the reason instead. The
// returned group is done when all of the chapter's exercises are.
func (b builder) buildAndQueue(ctx context.Context, spec rubric.Chapter, ch *ChapterResult, timeout time.Duration, jobs chan<- job) (*sync.WaitGroup, error) {
	pending := &sync.WaitGroup{}
	if !b.deadline.IsZero() && time.Until(b.deadline) < time.Second {
		notRunBudget(ch, b.budget, "before the chapter was built")
		return pending, nil
	}
	ov, fatal := b.pristine.forChapter(ch.Dir)
	for k, v := range b.extra {
		ov.Replace[k] = v
	}
	if fatal != "" {
		for i := range ch.Exercises {
			ch.Exercises[i].Cause, ch.Exercises[i].Message = CauseIntegrity, fatal
		}
		return pending, nil
	}
	allowed := map[string]bool{}
	for _, r := range slices.Concat(b.allow, spec.Screen.Allow) {
		allowed[r] = true
	}
	flags, err := ov.flags(b.tmp, ch.ID)
	if err != nil {
		return nil, err
	}
	hits, err := gateChapter(ctx, b.root, b.module, ch.Dir, spec, allowed, ov.Replace, flags)
	if err != nil {
		return nil, err
	}
	ch.Integrity = append(ch.Integrity, screenCost(hits, ch)...)
	if !slices.ContainsFunc(ch.Exercises, func(e ExerciseResult) bool { return !decided(e) }) {
		return pending, nil // nothing left to earn: do not even compile it
	}
	binary := filepath.Join(b.tmp, ch.ID+".test")
	buildCtx, cancel := ctx, context.CancelFunc(func() {})
	if !b.deadline.IsZero() {
		buildCtx, cancel = context.WithDeadline(ctx, b.deadline)
	}
	failure, err := buildChapter(buildCtx, b.root, ch.Dir, binary, flags)
	cancel()
	if err != nil && ctx.Err() == nil && buildCtx.Err() != nil {
		notRunBudget(ch, b.budget, "while the chapter was being built")
		return pending, nil
	}
	if err != nil {
		return nil, err
	}
	if failure != "" {
		ch.BuildError = failure
		for i := range ch.Exercises {
			if !decided(ch.Exercises[i]) {
				ch.Exercises[i].Cause, ch.Exercises[i].Message = CauseBuildError, failure
			}
		}
		return pending, nil
	}
	// The judge is built from the course's wiring whatever the checkout
	// holds (forChapter restores it): whether a chapter is judged is not the
	// student's tree's to say.
	judgeBinary := filepath.Join(b.tmp, ch.ID+".judge")
	failure, err = b.buildJudge(ctx, ch.Dir, judgeBinary, ov)
	if err != nil {
		return nil, err
	}
	if failure != "" {
		return nil, fmt.Errorf("the course's judge for %s does not build (a fault of the course, not of the student's code):\n%s", ch.Dir, failure)
	}
	positions := findTests(b.root, ch.Dir, ov)
	for _, i := range longestFirst(exerciseLimits(spec, timeout)) {
		ex := &ch.Exercises[i]
		if pos, ok := positions[ex.Test]; ok {
			ex.File, ex.Line = pos.file, pos.line
		}
		if decided(*ex) {
			continue
		}
		pending.Add(1)
		j := job{
			exercise: exercise{
				binary:  binary,
				judge:   judgeBinary,
				scale:   b.scale,
				pkgDir:  filepath.Join(b.root, filepath.FromSlash(ch.Dir)),
				pkg:     ch.Package,
				test:    ex.Test,
				timeout: scaled(spec.Exercises[i].TimeLimit(timeout), b.scale),
				student: ch.Dir,
			},
			limit:    spec.Exercises[i].TimeLimit(timeout),
			again:    1,
			root:     b.root,
			result:   ex,
			done:     pending,
			deadline: b.deadline,
			budget:   b.budget,
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

// othersMayEnter reports whether every folder from / to dir lets other
// users through (o+x), and dir lets them list it.
func othersMayEnter(dir string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		if d == filepath.Dir(d) {
			return true
		}
	}
}

// runJob runs one exercise and records its grade. It reports whether the
// exercise timed out with its full time limit (one the budget did not cut),
// which deserves a run alone before it is charged.
func runJob(ctx context.Context, rn *runner, j job) (retry bool) {
	defer j.done.Done()
	res := j.result
	j.rescale(rn.measureLoad())
	j.extensions = maxLimitExtensions
	shortened := false
	if !j.deadline.IsZero() {
		// What is left of the budget must cover the time limit, its
		// extensions and the grace the grader gives a binary to report it.
		left := time.Until(j.deadline)
		fit := time.Duration(float64(left-5*time.Second) / 1.1)
		if fit < j.timeout {
			if fit < time.Second {
				res.Cause, res.Message = CauseNotRun, budgetMessage(j.budget, "before this exercise could run")
				return
			}
			j.timeout, shortened = fit, true
		}
		j.extensions = min(j.extensions, int(fit/j.timeout)-1)
	}
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
	if shortened && out.Cause == CauseTimeout {
		res.Message += fmt.Sprintf("\n(its time limit was cut to %s to fit the grading budget, -budget %s)", j.timeout.Round(time.Second), j.budget)
	}
	res.Duration = Seconds(wall)
	if out.Elapsed > 0 {
		res.Duration = Seconds(out.Elapsed)
	}
	if out.Cause == "" {
		res.Passed, res.Points = true, res.Max
	}
	return out.Cause == CauseTimeout && !shortened
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
