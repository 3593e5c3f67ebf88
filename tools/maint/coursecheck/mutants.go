package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"serverlab/tools/internal/grade"
	"serverlab/tools/internal/rubric"
)

// The mutant catalogue (make mutants): the suites' own tests. Each
// tools/maint/mutants/NN/<exercise>/<name>.patch is one plausible wrong solution: a
// "# why" line, then a unified diff against solutions/NN (a/ and b/
// prefixes). The runner applies each to copies of the files it touches,
// builds solutions/NN with them through an overlay and grades that exercise
// alone: it must lose its points with a sensible cause. A mutant that keeps
// them SURVIVED (the suite misses that mistake); one that does not apply or
// does not compile is invalid (the catalogue's fault). Either fails the run.

// mutant is one entry of the catalogue.
type mutant struct {
	chapter, exercise, name string
	file                    string // the patch, relative to the root, slash-separated
	why                     string
	patches                 []filePatch
	err                     error // the patch does not parse
}

// mutantResult is one mutant, graded.
type mutantResult struct {
	mutant
	verdict  string // killed, SURVIVED or invalid
	cause    string // the exercise's cause, or why the mutant is invalid
	detail   string // for a survivor or an invalid mutant: what to look at
	duration time.Duration
}

const (
	verdictKilled   = "killed"
	verdictSurvived = "SURVIVED"
	verdictInvalid  = "invalid"
)

// killingCauses are the causes that count as a kill: the suite noticed, or
// the grader's screening did (a mutant that hands an exercise's work to the
// given code it must write itself). A build error or an exercise that did not
// run says nothing about the suite.
var killingCauses = []grade.Cause{grade.CauseFailed, grade.CauseTimeout, grade.CauseRace, grade.CauseLeak, grade.CausePanic, grade.CauseExited, grade.CauseIntegrity}

// findMutants reads the catalogue under root/dir: dir/NN/<exercise>/*.patch.
// A missing catalogue is empty.
func findMutants(root, dir string) ([]mutant, error) {
	base := filepath.Join(root, filepath.FromSlash(dir))
	var found []mutant
	err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == base {
				return fs.SkipAll
			}
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".patch") {
			return nil
		}
		rel, err := filepath.Rel(base, p)
		if err != nil {
			return err
		}
		m := mutant{file: path.Join(dir, filepath.ToSlash(rel))}
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if len(parts) != 3 {
			m.name = strings.TrimSuffix(filepath.ToSlash(rel), ".patch")
			m.err = fmt.Errorf("not at %s/NN/<exercise>/<name>.patch", dir)
			found = append(found, m)
			return nil
		}
		m.chapter, m.exercise, m.name = parts[0], parts[1], strings.TrimSuffix(parts[2], ".patch")
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		text := string(raw)
		first, _, _ := strings.Cut(text, "\n")
		if why, ok := strings.CutPrefix(first, "#"); ok && strings.TrimSpace(why) != "" {
			m.why = strings.TrimSpace(why)
		} else {
			m.err = errors.New(`the first line must be "# <what it gets wrong, and why it matters>"`)
		}
		if m.err == nil {
			m.patches, m.err = parsePatch(text)
		}
		found = append(found, m)
		return nil
	})
	slices.SortFunc(found, func(a, b mutant) int {
		return cmp.Or(cmp.Compare(a.chapter, b.chapter), compareIDs(a.exercise, b.exercise), cmp.Compare(a.name, b.name))
	})
	return found, err
}

// compareIDs orders exercise ids numerically: 5.2 before 5.10.
func compareIDs(a, b string) int {
	an, aok := exerciseNumber(a)
	bn, bok := exerciseNumber(b)
	if !aok || !bok {
		return cmp.Compare(a, b)
	}
	return cmp.Compare(an, bn)
}

func exerciseNumber(id string) (int, bool) {
	_, k, ok := strings.Cut(id, ".")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(k)
	return n, err == nil
}

// sampleMutants picks n mutants, the same ones for the same seed, and keeps
// them in catalogue order.
func sampleMutants(all []mutant, n int, seed uint64) []mutant {
	if n <= 0 || n >= len(all) {
		return all
	}
	idx := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)).Perm(len(all))[:n]
	slices.Sort(idx)
	picked := make([]mutant, n)
	for i, j := range idx {
		picked[i] = all[j]
	}
	return picked
}

// dateSeed is the default seed of -sample: today's date (UTC) as 20261201,
// so that a day's runs agree and the days go round the catalogue.
func dateSeed(now time.Time) uint64 {
	y, m, d := now.UTC().Date()
	return uint64(y*10000 + int(m)*100 + d)
}

// mutantEnv is what grading a mutant needs.
type mutantEnv struct {
	root, solutions string
	course          string // -course: where the course's own files (the suites) come from
	timeout         time.Duration
	base            map[string]string // the -overlay file's entries
	tmp             string
}

// runMutants is -mutants: grade the catalogue (or a sample of it) and print
// a table and a summary; exit 1 if any mutant survived or is invalid.
func runMutants(ctx context.Context, c config, chapters []rubric.Chapter, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintln(stderr, "coursecheck -mutants:", err)
		return grade.ExitError
	}
	root, err := filepath.Abs(c.Root)
	if err != nil {
		return fail(err)
	}
	base, err := readOverlay(c.Overlay)
	if err != nil {
		return fail(err)
	}
	all, err := findMutants(root, c.maint.mutantsDir)
	if err != nil {
		return fail(err)
	}
	// Only the chapters (and exercises) asked for; a mutant of an exercise
	// the rubric does not grade is invalid.
	full, err := grade.LoadRubric(c.Rubric)
	if err != nil {
		return fail(err)
	}
	selected := map[string]rubric.Chapter{}
	for _, ch := range chapters {
		selected[ch.ID] = ch
	}
	var catalogue []mutant
	for _, m := range all {
		ch, ok := selected[m.chapter]
		if !ok {
			if _, inRubric := full.Chapter(m.chapter); inRubric || c.Chapters != "" || c.Exercises != "" {
				continue // another chapter's
			}
		}
		if ok && c.Exercises != "" && !slices.ContainsFunc(ch.Exercises, func(e rubric.Exercise) bool { return e.ID == m.exercise }) {
			continue
		}
		catalogue = append(catalogue, m)
	}
	seed := c.maint.sampleSeed()
	graded := sampleMutants(catalogue, c.maint.sample, seed)
	sampleNote := ""
	if len(graded) < len(catalogue) {
		sampleNote = fmt.Sprintf(", a sample of %d (-seed %d)", len(graded), seed)
	}
	fmt.Fprintf(stdout, "mutants: %d in %s%s\n", len(catalogue), c.maint.mutantsDir, sampleNote)

	tmp, err := os.MkdirTemp("", "serverlab-mutants-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(tmp)
	env := mutantEnv{root: root, solutions: c.maint.solutions, course: c.Course, timeout: c.Timeout, base: base, tmp: tmp}
	start := time.Now()
	results := make([]mutantResult, len(graded))
	// Mutants run c.Jobs at once, in catalogue order, so one chapter's are
	// built one after the other (its dependencies come from the build cache)
	// while another mutant's test runs.
	next := make(chan int)
	var workers sync.WaitGroup
	for range max(c.Jobs, 1) {
		workers.Go(func() {
			for i := range next {
				results[i] = env.grade(ctx, graded[i], selected)
				if !c.Quiet {
					r := results[i]
					fmt.Fprintf(stderr, "coursecheck: mutant %s/%s/%s: %s %s (%s)\n", r.chapter, r.exercise, r.name, r.verdict, r.cause, grade.Seconds(r.duration))
				}
			}
		})
	}
	for _, i := range slowestFirst(graded) {
		select {
		case next <- i:
		case <-ctx.Done():
		}
	}
	close(next)
	workers.Wait()
	if ctx.Err() != nil {
		return fail(ctx.Err())
	}
	bad := writeMutantReport(stdout, results, catalogue, chapters, c.maint.min, time.Since(start))
	if bad > 0 {
		fmt.Fprintf(stderr, "coursecheck -mutants: %d mutant(s) survived or are invalid\n", bad)
		return grade.ExitRequirement
	}
	return grade.ExitOK
}

// slowestFirst is the order in which the workers take the mutants: the
// later chapters first, each chapter's in catalogue order (so its builds
// still come one after the other). A later chapter's mutant is the slow
// one (08's wait on NATS: a killed 8.1 mutant took 90 s in make test's
// sample, a 03 one 12 s); started last, it ran alone while the other
// workers sat idle, and the sample took 128 s instead of about 90. The
// report keeps catalogue order.
func slowestFirst(graded []mutant) []int {
	order := make([]int, len(graded))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(graded[b].chapter, graded[a].chapter) })
	return order
}

// grade applies one mutant and grades its exercise.
func (env mutantEnv) grade(ctx context.Context, m mutant, chapters map[string]rubric.Chapter) mutantResult {
	start := time.Now()
	r := mutantResult{mutant: m, verdict: verdictInvalid}
	invalid := func(cause string, err error) mutantResult {
		r.cause, r.detail = cause, err.Error()
		r.duration = time.Since(start)
		return r
	}
	if m.err != nil {
		return invalid("bad patch", m.err)
	}
	ch, ok := chapters[m.chapter]
	if !ok {
		return invalid("no such chapter", fmt.Errorf("the rubric has no chapter %q", m.chapter))
	}
	i := slices.IndexFunc(ch.Exercises, func(e rubric.Exercise) bool { return e.ID == m.exercise })
	if i < 0 {
		return invalid("no such exercise", fmt.Errorf("chapter %s has no graded exercise %q", m.chapter, m.exercise))
	}
	ch.Exercises = []rubric.Exercise{ch.Exercises[i]}
	replace, err := env.apply(m)
	if err != nil {
		return invalid("stale patch", err)
	}
	ov, err := writeOverlay(env.tmp, env.base, replace)
	if err != nil {
		return invalid("overlay", err)
	}
	rep, err := grade.Grade(ctx, grade.Options{Root: env.root, Target: env.solutions, Chapters: []rubric.Chapter{ch}, Timeout: env.timeout, Jobs: 1, Overlay: ov,
		Course: env.course, FailFast: true})
	if err != nil {
		return invalid("not graded", err)
	}
	ex := rep.Chapters[0].Exercises[0]
	for orig, tmp := range replace {
		if tmp != "" { // compile errors name the overlay's copy (by an absolute or a relative path): name the solution's file
			rel, _ := filepath.Rel(env.root, orig)
			copyPath := regexp.MustCompile(`[^\s:]*` + regexp.QuoteMeta(filepath.Base(tmp)))
			ex.Message = copyPath.ReplaceAllLiteralString(ex.Message, filepath.ToSlash(rel))
		}
	}
	switch {
	case ex.Passed:
		r.verdict, r.cause = verdictSurvived, "passed"
		r.detail = "the suite passes this wrong solution: strengthen " + ex.Test + "'s checks until it fails"
	case slices.Contains(killingCauses, ex.Cause):
		r.verdict, r.cause = verdictKilled, string(ex.Cause)
	default:
		r.cause, r.detail = string(ex.Cause), grade.FirstLines([]byte(ex.Message), 6)
	}
	r.duration = time.Since(start)
	return r
}

// apply applies m's patches to temporary copies of the solution's files and
// returns the overlay entries (a deleted file maps to "").
func (env mutantEnv) apply(m mutant) (map[string]string, error) {
	dir := filepath.Join(env.root, filepath.FromSlash(env.solutions), m.chapter)
	replace := map[string]string{}
	for _, fp := range m.patches {
		name := fp.Path()
		if strings.HasSuffix(name, "_test.go") {
			return nil, fmt.Errorf("%s: a mutant changes the solution, never its test wiring", name)
		}
		file := filepath.Join(dir, filepath.FromSlash(name))
		if _, dup := replace[file]; dup {
			return nil, fmt.Errorf("%s: patched twice; make one diff per file", name)
		}
		old, err := os.ReadFile(file)
		if err != nil && !(errors.Is(err, fs.ErrNotExist) && fp.Old == "") {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		content, err := fp.apply(string(old))
		if err != nil {
			return nil, err
		}
		if fp.New == "" {
			replace[file] = ""
			continue
		}
		tmp, err := writeTemp(env.tmp, name, content)
		if err != nil {
			return nil, err
		}
		replace[file] = tmp
	}
	return replace, nil
}
