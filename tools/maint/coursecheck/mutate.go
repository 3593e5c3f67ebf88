// Mechanical mutation (make mutation): the suites measured on mistakes nobody
// chose. The code a student writes is every declaration that holds a
// TODO(ex N.K) stub in chapters/NN; its solution in solutions/NN is mutated
// one change at a time, and each change is graded by the checks of the
// exercise(s) whose stub holds it, as make grade runs them.
//
// The operators are statement removal (a deleted Unlock, Done, close,
// Signal, deadline, return, continue, break, assignment, defer, go or call:
// the mistake that matters most in this course) and the classic operator and
// boundary changes (< and <=, > and >=, == and !=, && and ||, + and -, an
// integer constant moved by one, a condition negated, an if forced true or
// false). No kept Go mutation tool removes statements (gremlins changes
// operators only, and runs go test rather than the grader), hence this small
// go/ast mutator.
//
// A mutant that does not compile is "not compiled", never killed. A survivor
// that no test could tell from the solution is recorded as equivalent in
// tools/maint/mutants/equivalent.txt, keyed by mutantKey, with a reason.

package main

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"serverlab/tools/internal/grade"
	"serverlab/tools/internal/rubric"
)

// autoMutant is one mechanical change of one solution file.
type autoMutant struct {
	chapter   string
	file      string   // the solution file's name, in solutions/NN
	decl      string   // the declaration's key: "func (Server) Close"
	exercises []string // the exercises whose stubs hold the declaration
	op        string   // remove, swap, const, negate, if-true, if-false
	line      int
	before    string // the original line, trimmed
	after     string // what the change makes of it, trimmed
	content   string // the whole mutated file
	key       string // stable: NN/file:decl:op:hash of the line and its occurrence
}

// Verdicts of a mechanical mutant, besides killed and SURVIVED.
const (
	verdictNotCompiled = "not compiled"
	verdictEquivalent  = "equivalent"
	verdictNotRun      = "not run"
	verdictOpen        = "open" // survived, and known to: listed in open.txt until a check kills it
)

// autoResult is one mechanical mutant, graded.
type autoResult struct {
	autoMutant
	verdict, cause string
	duration       time.Duration
}

// equivalentFile lists the survivors judged equivalent: "key  reason" lines.
// openFile lists the survivors known and not yet killed, with what they get
// wrong: they count as survived, but do not fail the run (make test's
// sample), like the catalogue's .patch.open files.
const (
	equivalentFile = "tools/maint/mutants/equivalent.txt"
	openFile       = "tools/maint/mutants/open.txt"
)

// findAutoMutants makes every mutant of a chapter: the solution's
// declarations that the chapter stubs, changed one operator at a time.
func findAutoMutants(root, chTree, solTree string, ch rubric.Chapter) ([]autoMutant, error) {
	chDir := filepath.Join(root, chTree, ch.ID)
	solDir := filepath.Join(root, solTree, ch.ID)
	names, err := goFiles(chDir)
	if err != nil {
		return nil, err
	}
	var all []autoMutant
	for _, name := range names {
		_, chDecls, err := readDecls(filepath.Join(chDir, name))
		if err != nil {
			return nil, err
		}
		stubs := map[string][]string{} // decl key → exercises
		for _, d := range chDecls {
			if len(d.todos) > 0 {
				stubs[d.key] = append(stubs[d.key], d.todos...)
			}
		}
		if len(stubs) == 0 {
			continue
		}
		src, err := os.ReadFile(filepath.Join(solDir, name))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		ms, err := mutateFile(name, src, stubs)
		if err != nil {
			return nil, err
		}
		for i := range ms {
			ms[i].chapter = ch.ID
			ms[i].key = ch.ID + "/" + ms[i].key
		}
		all = append(all, ms...)
	}
	return all, nil
}

// mutateFile makes the mutants of the functions of src whose keys stubs
// names, each with the exercises that own it.
func mutateFile(name string, src []byte, stubs map[string][]string) ([]autoMutant, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	tf := fset.File(f.Pos())
	var out []autoMutant
	seen := map[string]bool{}
	occurrence := map[string]int{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		key, _ := declKey(fd)
		exercises, ok := stubs[key]
		if !ok {
			continue
		}
		for _, e := range editsOf(fd.Body, src, tf) {
			content := string(src[:e.start]) + e.text + string(src[e.end:])
			if seen[content] {
				continue // two operators made the same program
			}
			seen[content] = true
			line := tf.Line(tf.Pos(e.start))
			before := lineAt(string(src), e.start)
			after := lineAt(content, e.start)
			id := name + ":" + strings.TrimPrefix(key, "func ") + ":" + e.op + ":" + before + "→" + after
			occurrence[id]++
			sum := sha256.Sum256([]byte(id + "#" + strconv.Itoa(occurrence[id])))
			out = append(out, autoMutant{
				file: name, decl: key, exercises: slices.Compact(slices.Sorted(slices.Values(exercises))),
				op: e.op, line: line, before: before, after: after, content: content,
				key: name + ":" + strings.TrimPrefix(key, "func ") + ":" + e.op + ":" + hex.EncodeToString(sum[:4]),
			})
		}
	}
	return out, nil
}

// lineAt is the trimmed line of s that holds offset i.
func lineAt(s string, i int) string {
	start := strings.LastIndexByte(s[:i], '\n') + 1
	end := strings.IndexByte(s[i:], '\n')
	if end < 0 {
		end = len(s) - i
	}
	return strings.TrimSpace(s[start : i+end])
}

// edit replaces src[start:end] with text.
type edit struct {
	op         string
	start, end int
	text       string
}

// swaps are the operator and boundary mutations.
var swaps = map[token.Token]token.Token{
	token.LSS: token.LEQ, token.LEQ: token.LSS,
	token.GTR: token.GEQ, token.GEQ: token.GTR,
	token.EQL: token.NEQ, token.NEQ: token.EQL,
	token.LAND: token.LOR, token.LOR: token.LAND,
	token.ADD: token.SUB, token.SUB: token.ADD,
}

// editsOf lists every mutation of a function body.
func editsOf(body *ast.BlockStmt, src []byte, tf *token.File) []edit {
	off := func(p token.Pos) int { return tf.Offset(p) }
	text := func(n ast.Node) string { return string(src[off(n.Pos()):off(n.End())]) }
	var edits []edit
	removeAll := func(list []ast.Stmt) {
		for _, s := range list {
			if removable(s) {
				edits = append(edits, edit{op: "remove", start: off(s.Pos()), end: off(s.End()), text: ""})
			}
		}
	}
	condition := func(cond ast.Expr, forced bool) {
		if cond == nil {
			return
		}
		start, end := off(cond.Pos()), off(cond.End())
		if be, ok := cond.(*ast.BinaryExpr); !ok || (be.Op != token.EQL && be.Op != token.NEQ) {
			edits = append(edits, edit{op: "negate", start: start, end: end, text: "!(" + text(cond) + ")"})
		}
		if forced {
			edits = append(edits, edit{op: "if-true", start: start, end: end, text: "true"},
				edit{op: "if-false", start: start, end: end, text: "false"})
		}
	}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return true
		case *ast.BlockStmt:
			removeAll(n.List)
		case *ast.CaseClause:
			removeAll(n.Body)
		case *ast.CommClause:
			removeAll(n.Body)
		case *ast.IfStmt:
			condition(n.Cond, true)
		case *ast.ForStmt:
			condition(n.Cond, false)
		case *ast.BinaryExpr:
			if to, ok := swaps[n.Op]; ok && !isStringConcat(n) {
				p := off(n.OpPos)
				edits = append(edits, edit{op: "swap", start: p, end: p + len(n.Op.String()), text: to.String()})
			}
		case *ast.BasicLit:
			if n.Kind == token.INT {
				if v, err := strconv.ParseInt(n.Value, 0, 64); err == nil {
					to := v + 1
					if v == 1 {
						to = 0
					}
					edits = append(edits, edit{op: "const", start: off(n.Pos()), end: off(n.End()), text: strconv.FormatInt(to, 10)})
				}
			}
		}
		return true
	})
	slices.SortStableFunc(edits, func(a, b edit) int { return cmp.Compare(a.start, b.start) })
	return edits
}

// removable says whether deleting s leaves a program that may compile and
// means a mistake: not a declaration (its names would be undefined), not an
// empty or labelled statement.
func removable(s ast.Stmt) bool {
	switch s := s.(type) {
	case *ast.ExprStmt, *ast.SendStmt, *ast.IncDecStmt, *ast.DeferStmt, *ast.GoStmt, *ast.ReturnStmt, *ast.BranchStmt:
		return true
	case *ast.AssignStmt:
		return s.Tok != token.DEFINE
	case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt, *ast.SwitchStmt, *ast.SelectStmt, *ast.TypeSwitchStmt:
		return true // a whole check or loop left out
	}
	return false
}

// isStringConcat guesses a + of strings (a literal on either side), whose
// swap to - cannot compile.
func isStringConcat(b *ast.BinaryExpr) bool {
	if b.Op != token.ADD {
		return false
	}
	for _, e := range []ast.Expr{b.X, b.Y} {
		if l, ok := e.(*ast.BasicLit); ok && (l.Kind == token.STRING || l.Kind == token.CHAR) {
			return true
		}
	}
	return false
}

// readKeyed reads "key  reason" lines; # starts a comment. The key ends at
// the first two spaces, not the first one: a method's key holds its
// receiver, "04/rwlock.go:(RWLock) Lock:const:07ec1657".
func readKeyed(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	eq := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, reason, _ := strings.Cut(line, "  ")
		eq[strings.TrimSpace(key)] = strings.TrimSpace(reason)
	}
	return eq, sc.Err()
}

// runMutate is -mutate: make, grade and count every mechanical mutant of the
// chosen chapters (or -sample of them), within -mutate-for.
func runMutate(ctx context.Context, c config, chapters []rubric.Chapter, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintln(stderr, "coursecheck -mutate:", err)
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
	equivalent, err := readKeyed(filepath.Join(root, equivalentFile))
	if err != nil {
		return fail(err)
	}
	open, err := readKeyed(filepath.Join(root, openFile))
	if err != nil {
		return fail(err)
	}
	byID := map[string]rubric.Chapter{}
	var all []autoMutant
	for _, ch := range chapters {
		byID[ch.ID] = ch
		ms, err := findAutoMutants(root, c.Target, c.maint.solutions, ch)
		if err != nil {
			return fail(err)
		}
		all = append(all, ms...)
	}
	if c.maint.only != "" {
		keys := strings.Split(c.maint.only, ",")
		all = slices.DeleteFunc(all, func(m autoMutant) bool {
			return !slices.ContainsFunc(keys, func(k string) bool { return strings.HasPrefix(m.key, k) })
		})
	}
	seed := c.maint.sampleSeed()
	graded := all
	if n := c.maint.sample; n > 0 && n < len(all) {
		graded = nil
		for _, i := range sampleIndexes(len(all), n, seed) {
			graded = append(graded, all[i])
		}
		fmt.Fprintf(stdout, "mutate: %d mutants, a sample of %d (-seed %d)\n", len(all), n, seed)
	} else {
		fmt.Fprintf(stdout, "mutate: %d mutants\n", len(all))
	}
	tmp, err := os.MkdirTemp("", "serverlab-mutate-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(tmp)
	env := mutantEnv{root: root, solutions: c.maint.solutions, course: c.Course, timeout: c.Timeout, base: base, tmp: tmp}
	start := time.Now()
	// -mutate-for is a hard budget: a mutant still being graded when it is
	// spent is stopped and counts as not run, like those never started.
	runCtx := ctx
	if c.maint.mutateFor > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, c.maint.mutateFor)
		defer cancel()
	}
	results := make([]autoResult, len(graded))
	next := make(chan int)
	var workers sync.WaitGroup
	for range max(c.Jobs, 1) {
		workers.Go(func() {
			for i := range next {
				m := graded[i]
				switch reason, ok := equivalent[m.key]; {
				case ok:
					results[i] = autoResult{autoMutant: m, verdict: verdictEquivalent, cause: reason}
				case runCtx.Err() != nil:
					results[i] = autoResult{autoMutant: m, verdict: verdictNotRun, cause: "-mutate-for spent"}
				default:
					results[i] = env.gradeAuto(runCtx, m, byID[m.chapter])
					if results[i].verdict == verdictNotRun && runCtx.Err() != nil {
						results[i].cause = "-mutate-for spent"
					}
				}
				if note, ok := open[m.key]; ok && results[i].verdict == verdictSurvived {
					results[i].verdict, results[i].cause = verdictOpen, note
				}
				if !c.Quiet {
					r := results[i]
					fmt.Fprintf(stderr, "coursecheck: %s %s:%d %s: %s %s (%s)\n", r.key, r.file, r.line, r.op, r.verdict, r.cause, grade.Seconds(r.duration))
				}
			}
		})
	}
	for i := range graded {
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
	if writeMutateReport(stdout, results, c, time.Since(start)) > 0 {
		return grade.ExitRequirement
	}
	if noneCompiled(results) {
		// Not a score of 100 %: nothing was measured. The usual cause is
		// an exercise not yet committed, graded with git HEAD's course files.
		fmt.Fprintln(stderr, "coursecheck: no mutant compiled, so nothing was measured: if the exercise is not committed yet, commit it or add -course checkout")
		return grade.ExitRequirement
	}
	return grade.ExitOK
}

// noneCompiled says whether mutants were graded and not one of them compiled.
func noneCompiled(results []autoResult) bool {
	graded := 0
	for _, r := range results {
		switch r.verdict {
		case "", verdictNotRun, verdictEquivalent:
			continue // not graded: not reached within -mutate-for, or judged before
		case verdictNotCompiled:
			graded++
		default:
			return false
		}
	}
	return graded > 0
}

// sampleIndexes picks n of 0..total-1 by seed, in order.
func sampleIndexes(total, n int, seed uint64) []int {
	idx := make([]mutant, total)
	for i := range idx {
		idx[i].name = strconv.Itoa(i)
	}
	var out []int
	for _, m := range sampleMutants(idx, n, seed) {
		i, _ := strconv.Atoi(m.name)
		out = append(out, i)
	}
	return out
}

// gradeAuto grades one mechanical mutant with the checks of the exercises
// that own its declaration. It is killed when any of them loses its points
// with a sensible cause. A stub's declaration may hold given code that a
// later exercise checks (Serve's refusal after Close, checked with Close):
// a mutant its owners pass is graded again with the whole chapter before it
// is called a survivor.
func (env mutantEnv) gradeAuto(ctx context.Context, m autoMutant, ch rubric.Chapter) autoResult {
	start := time.Now()
	r := autoResult{autoMutant: m}
	done := func(verdict, cause string) autoResult {
		r.verdict, r.cause, r.duration = verdict, cause, time.Since(start)
		return r
	}
	var owners []rubric.Exercise
	for _, e := range ch.Exercises {
		if slices.Contains(m.exercises, e.ID) {
			owners = append(owners, e)
		}
	}
	if len(owners) == 0 {
		return done(verdictNotRun, "no graded exercise owns "+m.decl)
	}
	file := filepath.Join(env.root, filepath.FromSlash(env.solutions), m.chapter, m.file)
	tmpFile, err := writeTemp(env.tmp, m.file, m.content)
	if err != nil {
		return done(verdictNotRun, err.Error())
	}
	defer os.Remove(tmpFile)
	ov, err := writeOverlay(env.tmp, env.base, map[string]string{file: tmpFile})
	if err != nil {
		return done(verdictNotRun, err.Error())
	}
	defer os.Remove(ov)
	verdict, cause := env.gradeWith(ctx, ch, owners, ov)
	if verdict == verdictSurvived && len(owners) < len(ch.Exercises) {
		var others []rubric.Exercise
		for _, e := range ch.Exercises {
			if !slices.Contains(m.exercises, e.ID) {
				others = append(others, e)
			}
		}
		if v, c := env.gradeWith(ctx, ch, others, ov); v == verdictKilled {
			verdict, cause = v, c+" (not by "+strings.Join(m.exercises, ",")+")"
		}
	}
	return done(verdict, cause)
}

// gradeWith grades the overlay's mutant with the given exercises of ch.
func (env mutantEnv) gradeWith(ctx context.Context, ch rubric.Chapter, exercises []rubric.Exercise, ov string) (verdict, cause string) {
	ch.Exercises = exercises
	rep, err := grade.Grade(ctx, grade.Options{Root: env.root, Target: env.solutions, Chapters: []rubric.Chapter{ch}, Timeout: env.timeout,
		Jobs: min(len(exercises), 2), Overlay: ov, Course: env.course, FailFast: true})
	if err != nil {
		return verdictNotRun, err.Error()
	}
	verdict, cause = verdictSurvived, "passed"
	for _, ex := range rep.Chapters[0].Exercises {
		switch {
		case ex.Cause == grade.CauseBuildError:
			return verdictNotCompiled, "build error"
		case slices.Contains(killingCauses, ex.Cause):
			return verdictKilled, ex.ID + " " + string(ex.Cause)
		case !ex.Passed:
			verdict, cause = verdictNotRun, ex.ID+" "+string(ex.Cause)
		}
	}
	return verdict, cause
}
