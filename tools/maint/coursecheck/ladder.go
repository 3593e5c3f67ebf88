package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"serverlab/tools/internal/grade"
	"serverlab/tools/internal/rubric"
)

// The ladder (make ladder): a starter must fail every unsolved exercise with
// cause "failed", whatever else the student has solved. For each chapter and
// k = 0..n it builds the starter with the solution's code for exercises 1..k
// only, grades it, and requires exactly those points, every other exercise
// "failed" (never leak, panic, timeout or race).
//
// Exercises map to code by their stubs: every stub carries a
// `// TODO(ex N.K)` comment. A top-level declaration of the starter whose
// doc or body has one is replaced by the solution's declaration of the same
// name once its lowest exercise is solved; declarations only the solution has
// (helpers, types) come with the first declaration that uses them; the
// imports are then recomputed. An exercise without stubs of its own (its
// TODOs, if any, are all in declarations an earlier exercise also owns) must
// pass once every exercise before it is solved, and may pass earlier (it has
// no code to leave unsolved); if it loses its points, the cause must still be
// "failed".

var todoMark = regexp.MustCompile(`TODO\(ex (\d+\.\d+)\)`)

// Verdicts a rung expects of an exercise.
const (
	mustFail = iota // unsolved: it must lose its points with cause "failed"
	mustPass        // solved
	mayPass         // no code of its own, and not everything before it solved: passed or failed
)

// rungResult is one level of a chapter's ladder, graded.
type rungResult struct {
	k          int
	want, got  int // points
	max        int
	mismatches []string // "3.4: leak (want failed)"
	kinds      mismatchKinds
	details    []string // the first lines of each mismatch's message
	duration   time.Duration
}

// ladderEnv is what every rung's grading needs.
type ladderEnv struct {
	root, target, solutions string // absolute root; trees relative to it
	course                  string // -course: where the course's own files (the suites) come from
	timeout                 time.Duration
	jobs                    int
	base                    map[string]string // the -overlay file's entries
	tmp                     string
}

// runLadder is -ladder: every chapter's ladder, as tables; exit 1 on any
// mismatch.
func runLadder(ctx context.Context, c config, chapters []rubric.Chapter, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintln(stderr, "coursecheck -ladder:", err)
		return grade.ExitError
	}
	if c.Exercises != "" {
		return fail(fmt.Errorf("-ex does not apply: a ladder climbs all of a chapter's exercises"))
	}
	root, err := filepath.Abs(c.Root)
	if err != nil {
		return fail(err)
	}
	base, err := readOverlay(c.Overlay)
	if err != nil {
		return fail(err)
	}
	tmp, err := os.MkdirTemp("", "serverlab-ladder-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(tmp)
	seed := c.maint.sampleSeed()
	// The rungs move with the seed's other digits than the chapter's, so
	// that seeds one apart climb other rungs of another chapter.
	rungOffset := int(seed / uint64(len(chapters)) % (1 << 30))
	if c.maint.rotate && len(chapters) > 1 {
		ch := chapters[seed%uint64(len(chapters))]
		fmt.Fprintf(stdout, "ladder: chapter %s (-rotate -seed %d: one of %d chapters)\n", ch.ID, seed, len(chapters))
		chapters = []rubric.Chapter{ch}
	}
	env := ladderEnv{root: root, target: c.Target, solutions: c.maint.solutions, course: c.Course,
		timeout: c.Timeout, jobs: c.Jobs, base: base, tmp: tmp}

	bad := 0
	var kinds mismatchKinds
	for _, ch := range chapters {
		start := time.Now()
		plan, err := planLadder(ch, filepath.Join(root, filepath.FromSlash(c.Target), ch.ID),
			filepath.Join(root, filepath.FromSlash(c.maint.solutions), ch.ID))
		if err != nil {
			return fail(fmt.Errorf("chapter %s: %w", ch.ID, err))
		}
		levels := plan.levels()
		fmt.Fprintf(stdout, "ladder %s %s: %d exercises, %d rungs", ch.ID, ch.Title, len(ch.Exercises), len(levels))
		if k := c.maint.rung; k > 0 {
			if !slices.Contains(levels, k) {
				fmt.Fprintln(stdout)
				return fail(fmt.Errorf("chapter %s has no rung k=%d: its rungs are k = %s", ch.ID, k, strings.Trim(fmt.Sprint(levels), "[]")))
			}
			levels = []int{k}
			fmt.Fprintf(stdout, " (-rung %d)", k)
		}
		if c.maint.rungs > 0 {
			levels = sampleRungs(levels, len(ch.Exercises), c.maint.rungs, rungOffset)
			fmt.Fprintf(stdout, " (-rungs %d -seed %d: k = %s)", c.maint.rungs, seed, strings.Trim(fmt.Sprint(levels), "[]"))
		}
		fmt.Fprintln(stdout)
		for _, n := range plan.notes {
			fmt.Fprintf(stdout, "  note: %s\n", n)
		}
		fmt.Fprintf(stdout, "  %3s  %-12s %9s %9s %7s  %s\n", "k", "solved", "must get", "got", "time", "mismatches")
		for i, k := range levels {
			if !nextRungFits(time.Since(start), i, c.maint.ladderBudget) {
				fmt.Fprintf(stdout, "  k = %s not climbed: %d rung(s) took %s, and one more would pass -ladder-budget %s (make ladder CH=%s climbs them all)\n",
					strings.Trim(fmt.Sprint(levels[i:]), "[]"), i, grade.Seconds(time.Since(start)), c.maint.ladderBudget, ch.ID)
				break
			}
			r, err := env.climb(ctx, plan, k)
			if err != nil {
				return fail(fmt.Errorf("chapter %s, k=%d: %w", ch.ID, k, err))
			}
			fmt.Fprintf(stdout, "  %3d  %-12s %9s %9s %7s  %s\n", k, solvedRange(ch, k),
				fmt.Sprintf("%d/%d", r.want, r.max), fmt.Sprintf("%d/%d", r.got, r.max),
				grade.Seconds(r.duration), strings.Join(r.mismatches, ", "))
			for _, d := range r.details {
				fmt.Fprintf(stdout, "%s\n", indent(d, "        "))
			}
			bad += len(r.mismatches)
			kinds.add(r.kinds)
		}
		fmt.Fprintf(stdout, "  chapter %s: %s\n\n", ch.ID, grade.Seconds(time.Since(start)))
		if ctx.Err() != nil {
			return fail(ctx.Err())
		}
	}
	if bad > 0 {
		fmt.Fprintf(stderr, "coursecheck -ladder: %d mismatch(es): %s\n", bad, kinds)
		return grade.ExitRequirement
	}
	return grade.ExitOK
}

// mismatchKinds counts a ladder's mismatches by what went wrong, which
// points at different places to look.
type mismatchKinds struct {
	// solvedLost: a solved exercise lost its points. Its solution does not
	// work with only the exercises before it solved: a stub's TODO names
	// the wrong exercise, or the solution leans on a later one.
	solvedLost int
	// unsolvedPassed: an exercise whose stub is in place passed. The check
	// is too weak to tell the stub from the answer, or the stub does more
	// than fail.
	unsolvedPassed int
	// unclean: an unsolved exercise lost its points with another cause than
	// "failed" (a panic, a hang, a leak, a race): the stub or the suite
	// does not fail cleanly.
	unclean int
}

func (m *mismatchKinds) add(o mismatchKinds) {
	m.solvedLost += o.solvedLost
	m.unsolvedPassed += o.unsolvedPassed
	m.unclean += o.unclean
}

// String says which kinds happened, each with its count and where to look.
func (m mismatchKinds) String() string {
	var parts []string
	if m.solvedLost > 0 {
		parts = append(parts, fmt.Sprintf("%d solved exercise(s) lost their points (does a TODO name the wrong exercise, or a solution need a later one?)", m.solvedLost))
	}
	if m.unsolvedPassed > 0 {
		parts = append(parts, fmt.Sprintf("%d unsolved exercise(s) passed on the starter's stub (a check too weak, or a stub that does the work)", m.unsolvedPassed))
	}
	if m.unclean > 0 {
		parts = append(parts, fmt.Sprintf("%d unsolved exercise(s) failed with another cause than \"failed\" (a starter that does not fail its unsolved exercises cleanly)", m.unclean))
	}
	return strings.Join(parts, "; ")
}

// climb builds and grades the chapter with exercises 1..k solved.
func (env ladderEnv) climb(ctx context.Context, plan *ladderPlan, k int) (rungResult, error) {
	start := time.Now()
	replace := map[string]string{}
	for _, lf := range plan.files {
		if !slices.ContainsFunc(lf.changes, func(c ladderChange) bool { return c.level <= k }) {
			continue
		}
		src, err := lf.source(k)
		if err != nil {
			return rungResult{}, fmt.Errorf("%s: %w", lf.path, err)
		}
		tmp, err := writeTemp(env.tmp, lf.path, string(src))
		if err != nil {
			return rungResult{}, err
		}
		replace[lf.path] = tmp
	}
	ov, err := writeOverlay(env.tmp, env.base, replace)
	if err != nil {
		return rungResult{}, err
	}
	rep, err := grade.Grade(ctx, grade.Options{Root: env.root, Target: env.target, Chapters: []rubric.Chapter{plan.chapter},
		Timeout: env.timeout, Jobs: env.jobs, Overlay: ov, Course: env.course})
	if err != nil {
		return rungResult{}, err
	}
	r := rungResult{k: k, duration: time.Since(start)}
	want := plan.expected(k)
	for i, ex := range rep.Chapters[0].Exercises {
		r.max += ex.Max
		r.got += ex.Points
		if want[i] == mustPass {
			r.want += ex.Max
		}
		var miss string
		switch {
		case want[i] == mustPass && !ex.Passed:
			miss = fmt.Sprintf("%s: %s (want passed)", ex.ID, ex.Cause)
			r.kinds.solvedLost++
		case want[i] == mustFail && ex.Passed:
			miss = fmt.Sprintf("%s: passed (want failed)", ex.ID)
			r.kinds.unsolvedPassed++
		case want[i] != mustPass && !ex.Passed && ex.Cause != grade.CauseFailed:
			miss = fmt.Sprintf("%s: %s (want failed)", ex.ID, ex.Cause)
			r.kinds.unclean++
		}
		if miss != "" {
			r.mismatches = append(r.mismatches, miss)
			if ex.Message != "" {
				r.details = append(r.details, ex.ID+": "+grade.FirstLines([]byte(ex.Message), 4))
			}
		}
	}
	return r, nil
}

// nextRungFits says whether a chapter whose first climbed rungs took spent
// climbs one more within budget (0: no limit), taking the next to cost as
// much as their average. The first rung is always climbed. A budget bounds
// make test's ladder sample whichever chapter the seed draws: two rungs of
// chapter 08 took 179 s where two of 01–06 take under a minute.
func nextRungFits(spent time.Duration, climbed int, budget time.Duration) bool {
	if budget <= 0 || climbed == 0 {
		return true
	}
	return spent+spent/time.Duration(climbed) <= budget
}

// sampleRungs picks n of the rungs strictly between k=0 and k=top (those two
// are the plain grades of the starter and the solution, which make test runs
// anyway): n consecutive ones, wrapping round, starting at a place that
// moves with the seed (offset).
func sampleRungs(levels []int, top, n, offset int) []int {
	var inner []int
	for _, k := range levels {
		if k > 0 && k < top {
			inner = append(inner, k)
		}
	}
	if n >= len(inner) {
		return inner
	}
	var picked []int
	for i := range n {
		picked = append(picked, inner[(offset+i)%len(inner)])
	}
	slices.Sort(picked)
	return picked
}

// solvedRange says which exercises rung k solves: "none", "3.1", "3.1–3.4".
func solvedRange(ch rubric.Chapter, k int) string {
	switch {
	case k == 0:
		return "none"
	case k == 1:
		return ch.Exercises[0].ID
	}
	return ch.Exercises[0].ID + "–" + ch.Exercises[k-1].ID
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}
