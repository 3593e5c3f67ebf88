package main

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/printer"
	"go/token"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"serverlab/tools/internal/grade"
	"slices"
	"strconv"
	"strings"
	"time"

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

// ladderPlan is how a chapter's starter becomes "exercises 1..k solved".
type ladderPlan struct {
	chapter rubric.Chapter
	files   []ladderFile
	own     []bool   // own[i]: exercise i (0-based) has a declaration of its own to solve
	notes   []string // what keeps the ladder from being exact, for the report
}

// ladderFile is one non-test Go file of the chapter and its changes.
type ladderFile struct {
	path    string            // the chapter file, absolute (it may not exist: a file only the solution has)
	src     []byte            // the starter's content
	imports map[string]string // both sides' imports, path → name: fixImports picks the used ones
	changes []ladderChange
}

// ladderChange replaces src[start:end] with text (an insertion when
// start == end) once exercise level (1-based) is solved.
type ladderChange struct {
	level      int
	start, end int
	text       string
}

// topDecl is one top-level declaration of a file, with the text it spans
// (doc comment included) and what it mentions.
type topDecl struct {
	key        string // "func Parse", "func (LineReader) Next", "type Pool", "var ErrX,ErrY"
	start, end int
	text       string
	code       string          // the declaration printed without comments: what it does
	todos      []string        // exercise ids of its TODO(ex …) comments
	defines    []string        // the names it declares
	mentions   map[string]bool // every identifier it uses
	isImport   bool
}

// planLadder compares chapters/NN with solutions/NN (chDir and solDir,
// absolute) and works out each declaration's level.
func planLadder(ch rubric.Chapter, chDir, solDir string) (*ladderPlan, error) {
	index := map[string]int{}
	for i, ex := range ch.Exercises {
		index[ex.ID] = i + 1
	}
	plan := &ladderPlan{chapter: ch, own: make([]bool, len(ch.Exercises))}
	names, err := goFiles(chDir, solDir)
	if err != nil {
		return nil, err
	}
	var all []candidate
	for _, name := range names {
		chSrc, chDecls, err := readDecls(filepath.Join(chDir, name))
		if err != nil {
			return nil, err
		}
		solSrc, solDecls, err := readDecls(filepath.Join(solDir, name))
		if err != nil {
			return nil, err
		}
		if chSrc == nil { // only the solution has the file: start from its header (build constraints, package clause)
			if chSrc, err = fileHeader(solSrc); err != nil {
				return nil, err
			}
		}
		if solSrc == nil {
			plan.notes = append(plan.notes, fmt.Sprintf("%s: only the starter has this file (kept at every level)", name))
			continue
		}
		plan.files = append(plan.files, ladderFile{path: filepath.Join(chDir, name), src: chSrc, imports: importsOf(chSrc, solSrc)})
		all = append(all, plan.candidates(len(plan.files)-1, name, chDecls, solDecls, index)...)
	}
	settleLevels(all, len(ch.Exercises))
	for _, c := range all {
		lf := &plan.files[c.file]
		change := ladderChange{level: c.level, start: len(lf.src), end: len(lf.src), text: "\n" + c.sol.text + "\n"}
		if c.starter != nil {
			change.start, change.end, change.text = c.starter.start, c.starter.end, c.sol.text
		}
		lf.changes = append(lf.changes, change)
	}
	plan.files = slices.DeleteFunc(plan.files, func(lf ladderFile) bool { return len(lf.changes) == 0 })
	for i, ex := range ch.Exercises {
		if !plan.own[i] {
			plan.notes = append(plan.notes, fmt.Sprintf("%s has no stub of its own (no declaration whose lowest TODO is its): it must pass once every exercise before it is solved, and may pass (or fail cleanly) before", ex.ID))
		}
	}
	return plan, nil
}

// candidate is a declaration of the solution that the ladder brings in at
// some level: in place of the starter's, or added at the end of its file.
type candidate struct {
	file    int      // index in plan.files
	sol     topDecl  // the solution's declaration
	starter *topDecl // the starter's it replaces; nil to add sol
	level   int      // 0 until known
}

// candidates lists one file's declarations to bring in. A starter
// declaration with a TODO(ex …) becomes the solution's once its lowest
// exercise is solved. The solution's declarations the starter lacks, and
// given declarations whose code differs (a mirror the chapter should fix;
// reported), get their level from settleLevels.
func (plan *ladderPlan) candidates(file int, name string, chDecls, solDecls []topDecl, index map[string]int) []candidate {
	solByKey := map[string]topDecl{}
	for _, d := range solDecls {
		solByKey[d.key] = d
	}
	inStarter := map[string]bool{}
	var out []candidate
	for _, d := range chDecls {
		inStarter[d.key] = true
		if d.isImport {
			continue
		}
		lv := plan.lowestTODO(name, d, index)
		sol, inSol := solByKey[d.key]
		switch {
		case !inSol && lv > 0:
			plan.notes = append(plan.notes, fmt.Sprintf("%s: %s is a stub the solution does not have (kept at every level)", name, d.key))
		case !inSol, sol.code == d.code && lv == 0:
			// the starter's own declaration, or identical given code
		case lv == 0:
			plan.notes = append(plan.notes, fmt.Sprintf("%s: given code differs from the solution's but has no TODO(ex …): %s", name, d.key))
			out = append(out, candidate{file: file, sol: sol, starter: &d})
		default:
			out = append(out, candidate{file: file, sol: sol, starter: &d, level: lv})
			plan.own[lv-1] = true
		}
	}
	for _, d := range solDecls {
		if !inStarter[d.key] && !d.isImport {
			out = append(out, candidate{file: file, sol: d})
		}
	}
	return out
}

// settleLevels gives every candidate without a level the lowest level of
// the candidates that mention a name it declares, in any file, directly or
// through others: a helper comes in with the first function that calls it.
// What nothing mentions comes in at the last level, n.
func settleLevels(all []candidate, n int) {
	fixed := make([]bool, len(all)) // a stub's level is its exercise's
	for i, c := range all {
		fixed[i] = c.level > 0
	}
	for again := true; again; {
		again = false
		for i := range all {
			if fixed[i] {
				continue
			}
			p := &all[i]
			for j, r := range all {
				if j == i || r.level == 0 || !mentionsAny(r.sol, p.sol.defines) {
					continue
				}
				if p.level == 0 || r.level < p.level {
					p.level = r.level
					again = true
				}
			}
		}
	}
	for i := range all {
		if all[i].level == 0 {
			all[i].level = n
		}
	}
}

// lowestTODO is the level (1-based exercise index) of d's lowest
// TODO(ex …), or 0 if it has none.
func (plan *ladderPlan) lowestTODO(name string, d topDecl, index map[string]int) int {
	lv := 0
	for _, id := range d.todos {
		i, ok := index[id]
		if !ok {
			plan.notes = append(plan.notes, fmt.Sprintf("%s: %s has TODO(ex %s), which is not an exercise of chapter %s", name, d.key, id, plan.chapter.ID))
			continue
		}
		if lv == 0 || i < lv {
			lv = i
		}
	}
	return lv
}

// Verdicts a rung expects of an exercise.
const (
	mustFail = iota // unsolved: it must lose its points with cause "failed"
	mustPass        // solved
	mayPass         // no code of its own, and not everything before it solved: passed or failed
)

// expected says what each exercise must do at level k: 1..k pass; an
// exercise without code of its own passes once every exercise before it
// does, and before that may pass or fail (cleanly: it has nothing unsolved
// of its own, but may not need all of what comes before it); the others fail.
func (p *ladderPlan) expected(k int) []int {
	want := make([]int, len(p.own))
	prefix := true
	for i := range want {
		switch {
		case i < k, !p.own[i] && prefix:
			want[i] = mustPass
		case !p.own[i]:
			want[i] = mayPass
		}
		prefix = prefix && want[i] == mustPass
	}
	return want
}

// levels are the values of k worth building: 0, and each k whose exercise
// has code of its own (the others build exactly what k-1 does).
func (p *ladderPlan) levels() []int {
	ks := []int{0}
	for i, own := range p.own {
		if own {
			ks = append(ks, i+1)
		}
	}
	return ks
}

// source returns the file as it is with exercises 1..k solved, its imports
// recomputed and gofmt'ed.
func (lf ladderFile) source(k int) ([]byte, error) {
	changes := slices.Clone(lf.changes)
	slices.SortStableFunc(changes, func(a, b ladderChange) int { return a.start - b.start })
	var buf bytes.Buffer
	pos := 0
	for _, c := range changes {
		if c.level > k {
			continue
		}
		buf.Write(lf.src[pos:c.start])
		buf.WriteString(c.text)
		pos = c.end
	}
	buf.Write(lf.src[pos:])
	return fixImports(buf.Bytes(), lf.imports)
}

// importsOf is every import either file has, by path, with its name ("" for
// the default one).
func importsOf(srcs ...[]byte) map[string]string {
	all := map[string]string{}
	for _, src := range srcs {
		f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.ImportsOnly)
		if err != nil {
			continue
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			name := ""
			if im.Name != nil {
				name = im.Name.Name
			}
			if _, ok := all[p]; !ok {
				all[p] = name
			}
		}
	}
	return all
}

// fixImports replaces the file's imports with those of known it uses (by
// package name), then formats it. Blank and dot imports the file had stay.
func fixImports(src []byte, known map[string]string) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments)
	if err != nil {
		return nil, fmt.Errorf("the assembled file does not parse: %w", err)
	}
	used := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				used[id.Name] = true
			}
		}
		return true
	})
	var keep []string
	for p, name := range known {
		local := name
		if local == "" {
			local = importName(p)
		}
		if name == "_" || name == "." || used[local] {
			spec := strconv.Quote(p)
			if name != "" {
				spec = name + " " + spec
			}
			keep = append(keep, spec)
		}
	}
	slices.Sort(keep)
	// Cut the old import declarations, put one block after the package clause.
	var out bytes.Buffer
	pos := 0
	tf := fset.File(f.Pos())
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.IMPORT {
			continue
		}
		out.Write(src[pos:tf.Offset(gd.Pos())])
		pos = tf.Offset(gd.End())
	}
	out.Write(src[pos:])
	body := out.Bytes()
	pkgEnd := tf.Offset(f.Name.End())
	var res bytes.Buffer
	res.Write(body[:pkgEnd])
	if len(keep) > 0 {
		res.WriteString("\n\nimport (\n\t" + strings.Join(keep, "\n\t") + "\n)\n")
	}
	res.Write(body[pkgEnd:])
	formatted, err := format.Source(res.Bytes())
	if err != nil {
		return nil, fmt.Errorf("the assembled file does not format: %w", err)
	}
	return formatted, nil
}

// importName guesses a package's name from its path: the last element, or
// the one before a major version suffix (math/rand/v2 is rand).
func importName(p string) string {
	base := path.Base(p)
	if len(base) > 1 && base[0] == 'v' && strings.Trim(base[1:], "0123456789") == "" {
		base = path.Base(path.Dir(p))
	}
	return strings.ReplaceAll(base, "-", "_")
}

// goFiles lists the non-test .go files of either directory (not below it).
func goFiles(dirs ...string) ([]string, error) {
	seen := map[string]bool{}
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			n := e.Name()
			if !e.IsDir() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
				seen[n] = true
			}
		}
	}
	return slices.Sorted(func(yield func(string) bool) {
		for n := range seen {
			if !yield(n) {
				return
			}
		}
	}), nil
}

// readDecls parses a file into its top-level declarations; a missing file
// is nil, nil.
func readDecls(file string) ([]byte, []topDecl, error) {
	src, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.ParseComments)
	if err != nil {
		return nil, nil, err
	}
	// Parsed again without comments, for the code alone: a given
	// declaration whose comments differ is still the same code.
	bareSet := token.NewFileSet()
	bare, err := parser.ParseFile(bareSet, file, src, 0)
	if err != nil {
		return nil, nil, err
	}
	tf := fset.File(f.Pos())
	var decls []topDecl
	for i, d := range f.Decls {
		start := d.Pos()
		var doc *ast.CommentGroup
		switch d := d.(type) {
		case *ast.FuncDecl:
			doc = d.Doc
		case *ast.GenDecl:
			doc = d.Doc
		}
		if doc != nil {
			start = doc.Pos()
		}
		td := topDecl{start: tf.Offset(start), end: tf.Offset(d.End())}
		td.text = string(src[td.start:td.end])
		td.key, td.defines = declKey(d)
		var code bytes.Buffer
		if err := printer.Fprint(&code, bareSet, bare.Decls[i]); err == nil {
			td.code = code.String()
		}
		td.mentions = map[string]bool{}
		ast.Inspect(d, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				td.mentions[id.Name] = true
			}
			return true
		})
		for _, c := range f.Comments {
			if c.Pos() >= start && c.End() <= d.End() {
				for _, m := range todoMark.FindAllStringSubmatch(c.Text(), -1) {
					if !slices.Contains(td.todos, m[1]) {
						td.todos = append(td.todos, m[1])
					}
				}
			}
		}
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.IMPORT {
			td.isImport = true
		}
		decls = append(decls, td)
	}
	return src, decls, nil
}

// declKey names a declaration so that the starter's and the solution's can
// be matched, and lists the names it declares.
func declKey(d ast.Decl) (string, []string) {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil || len(d.Recv.List) == 0 {
			return "func " + d.Name.Name, []string{d.Name.Name}
		}
		return "func (" + recvType(d.Recv.List[0].Type) + ") " + d.Name.Name, []string{d.Name.Name}
	case *ast.GenDecl:
		var names []string
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				names = append(names, s.Name.Name)
			case *ast.ValueSpec:
				for _, n := range s.Names {
					names = append(names, n.Name)
				}
			case *ast.ImportSpec:
				names = append(names, s.Path.Value)
			}
		}
		return d.Tok.String() + " " + strings.Join(names, ","), names
	}
	return "?", nil
}

// recvType is a receiver's type name without pointer or type parameters.
func recvType(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return "?"
		}
	}
}

func mentionsAny(d topDecl, names []string) bool {
	for _, n := range names {
		if n != "_" && d.mentions[n] {
			return true
		}
	}
	return false
}

// fileHeader returns a Go source up to the end of its package clause: its
// build constraints and package comment come with it.
func fileHeader(src []byte) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil {
		return nil, err
	}
	end := fset.File(f.Pos()).Offset(f.Name.End())
	return append(slices.Clip(src[:end]), '\n'), nil
}

// rungResult is one level of a chapter's ladder, graded.
type rungResult struct {
	k          int
	want, got  int // points
	max        int
	mismatches []string // "3.4: leak (want failed)"
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
	for _, ch := range chapters {
		start := time.Now()
		plan, err := planLadder(ch, filepath.Join(root, filepath.FromSlash(c.Target), ch.ID),
			filepath.Join(root, filepath.FromSlash(c.maint.solutions), ch.ID))
		if err != nil {
			return fail(fmt.Errorf("chapter %s: %w", ch.ID, err))
		}
		levels := plan.levels()
		fmt.Fprintf(stdout, "ladder %s %s: %d exercises, %d rungs", ch.ID, ch.Title, len(ch.Exercises), len(levels))
		if c.maint.rungs > 0 {
			levels = sampleRungs(levels, len(ch.Exercises), c.maint.rungs, rungOffset)
			fmt.Fprintf(stdout, " (-rungs %d -seed %d: k = %s)", c.maint.rungs, seed, strings.Trim(fmt.Sprint(levels), "[]"))
		}
		fmt.Fprintln(stdout)
		for _, n := range plan.notes {
			fmt.Fprintf(stdout, "  note: %s\n", n)
		}
		fmt.Fprintf(stdout, "  %3s  %-12s %9s %9s %7s  %s\n", "k", "solved", "must get", "got", "time", "mismatches")
		for _, k := range levels {
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
		}
		fmt.Fprintf(stdout, "  chapter %s: %s\n\n", ch.ID, grade.Seconds(time.Since(start)))
		if ctx.Err() != nil {
			return fail(ctx.Err())
		}
	}
	if bad > 0 {
		fmt.Fprintf(stderr, "coursecheck -ladder: %d mismatch(es): a starter does not fail its unsolved exercises cleanly\n", bad)
		return grade.ExitRequirement
	}
	return grade.ExitOK
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
		case want[i] == mustFail && ex.Passed:
			miss = fmt.Sprintf("%s: passed (want failed)", ex.ID)
		case want[i] != mustPass && !ex.Passed && ex.Cause != grade.CauseFailed:
			miss = fmt.Sprintf("%s: %s (want failed)", ex.ID, ex.Cause)
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
