// The ladder's plan: which of a chapter's declarations each rung takes from
// the solution, read from the two trees' syntax (ladder.go climbs it).

package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"

	"serverlab/tools/internal/rubric"
)

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
