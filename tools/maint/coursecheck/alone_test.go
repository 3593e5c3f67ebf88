package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"serverlab/tools/internal/rubric"
)

// A student writes one exercise at a time, in any order, and keeps the
// imports the starter file has. Once an exercise's stubs hold the solution's
// code, and nothing else changed, its files must still compile: the starter
// may not import a package that only a stub uses (a stub's
// lab.NotImplemented in a file whose solution never needs lab), because the
// student then meets "imported and not used" before any test runs.
//
// For each chapter and exercise with code of its own, the ladder's plan
// gives the solution's declarations of that exercise (its stubs, and the
// helpers only the solution has that they need); they replace the starter's
// alone, every import the file had stays, the ones the solution needs are
// added, and the chapter's package is type-checked against the compiled
// export data of its dependencies.
func TestEveryExerciseAloneCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks every chapter: not in -short")
	}
	root, err := filepath.Abs(fixtureRoot)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "solutions")); err != nil {
		t.Skip("no solutions/ here (the student release): nothing to splice")
	}
	rb, err := rubric.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range rb.Chapters {
		t.Run(ch.ID, func(t *testing.T) {
			if ch.ID == "05" && runtime.GOOS != "linux" {
				t.Skip("chapter 05 builds only on Linux")
			}
			requireNoNewFiles(t, root, ch)
			chDir := filepath.Join(root, "chapters", ch.ID)
			plan, err := planLadder(ch, chDir, filepath.Join(root, "solutions", ch.ID))
			if err != nil {
				t.Fatal(err)
			}
			pkg := goListExports(t, root, "serverlab/chapters/"+ch.ID, "serverlab/solutions/"+ch.ID)
			for i, ex := range ch.Exercises {
				if !plan.own[i] {
					continue
				}
				files := map[string][]byte{}
				helpers := helpersOf(plan, i+1)
				for _, lf := range plan.files {
					src, dropped, err := lf.alone(i+1, helpers)
					if err != nil {
						t.Errorf("exercise %s alone: %s: %v", ex.ID, filepath.Base(lf.path), err)
						continue
					}
					for _, imp := range dropped {
						t.Errorf("exercise %s: once its stubs hold the solution, %s no longer uses its import %q (only a stub did): the student meets \"imported and not used\"; let given code use it, or give the stub a file-local helper", ex.ID, filepath.Base(lf.path), imp)
					}
					files[filepath.Base(lf.path)] = src
				}
				if err := pkg.check(files); err != nil {
					t.Errorf("exercise %s: with only its solution in place of its stubs, chapter %s does not compile:\n%v", ex.ID, ch.ID, err)
				}
			}
		})
	}
}

// alone returns the file with exercise k's declarations alone solved: its
// stubs replaced by the solution's, and the declarations only the solution
// has that they need, directly or through each other (the helpers a student
// writes with the stubs that call them). It keeps every import the starter
// had that is still used, adds those the solution needs, and lists the
// starter's imports left unused.
func (lf ladderFile) alone(k int, helpers map[string]bool) (src []byte, dropped []string, err error) {
	changes := slices.DeleteFunc(slices.Clone(lf.changes), func(c ladderChange) bool {
		return c.level != k && !(c.start == c.end && helpers[c.text])
	})
	slices.SortStableFunc(changes, func(a, b ladderChange) int { return a.start - b.start })
	var buf bytes.Buffer
	pos := 0
	for _, c := range changes {
		buf.Write(lf.src[pos:c.start])
		buf.WriteString(c.text)
		pos = c.end
	}
	buf.Write(lf.src[pos:])
	out, err := fixImports(buf.Bytes(), lf.imports)
	if err != nil {
		return nil, nil, err
	}
	before, after := importPaths(lf.src), importPaths(out)
	for _, p := range before {
		if !slices.Contains(after, p) {
			dropped = append(dropped, p)
		}
	}
	return out, dropped, nil
}

// helpersOf returns the texts of the added declarations (those only the
// solution has) that exercise k's changes need, in any file of the plan.
func helpersOf(plan *ladderPlan, k int) map[string]bool {
	type decl struct {
		text     string
		defines  []string
		mentions map[string]bool
	}
	var mine, added []decl
	for _, lf := range plan.files {
		for _, c := range lf.changes {
			d := decl{text: c.text, mentions: map[string]bool{}}
			f, err := parser.ParseFile(token.NewFileSet(), "", "package p\n"+c.text, 0)
			if err != nil {
				continue
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok {
					d.mentions[id.Name] = true
				}
				return true
			})
			for _, fd := range f.Decls {
				_, names := declKey(fd)
				d.defines = append(d.defines, names...)
			}
			switch {
			case c.level == k:
				mine = append(mine, d)
			case c.start == c.end:
				added = append(added, d)
			}
		}
	}
	need := map[string]bool{}
	for grew := true; grew; {
		grew = false
		for _, a := range added {
			if need[a.text] {
				continue
			}
			for _, m := range slices.Concat(mine, filterDecls(added, need, func(d decl) string { return d.text })) {
				if m.text != a.text && mentionsName(m.mentions, a.defines) {
					need[a.text], grew = true, true
					break
				}
			}
		}
	}
	return need
}

func filterDecls[T any](ds []T, keep map[string]bool, key func(T) string) []T {
	var out []T
	for _, d := range ds {
		if keep[key(d)] {
			out = append(out, d)
		}
	}
	return out
}

func mentionsName(mentions map[string]bool, names []string) bool {
	for _, n := range names {
		if mentions[n] {
			return true
		}
	}
	return false
}

func importPaths(src []byte) []string {
	f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.ImportsOnly)
	if err != nil {
		return nil
	}
	var paths []string
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		paths = append(paths, p)
	}
	return paths
}

// listedPackage is what the type check needs of a chapter's package: its
// folder, its files for this platform and its dependencies' export data.
type listedPackage struct {
	dir     string
	files   []string          // the chapter's, for this platform
	extra   []string          // the solution's files the chapter lacks, for this platform
	exports map[string]string // import path → export data file
}

// goListExports lists pkg (the chapter) and the export data of its
// dependencies and of also's (the solution's, whose imports the student's
// code may add).
func goListExports(t *testing.T, root, pkg, also string) listedPackage {
	t.Helper()
	gocmd := os.Getenv("GO")
	if gocmd == "" {
		gocmd = "go"
	}
	cmd := exec.Command(gocmd, "list", "-export", "-deps", "-json=ImportPath,Dir,GoFiles,Export", pkg, also)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export %s %s: %v\n%s", pkg, also, err, stderr.String())
	}
	lp := listedPackage{exports: map[string]string{}}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath, Dir, Export string
			GoFiles                 []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		lp.exports[p.ImportPath] = p.Export
		switch p.ImportPath {
		case pkg:
			lp.dir, lp.files = p.Dir, p.GoFiles
		case also:
			lp.extra = p.GoFiles
		}
	}
	return lp
}

// check type-checks the package with some files' content replaced.
func (lp listedPackage) check(replaced map[string][]byte) error {
	fset := token.NewFileSet()
	var files []*ast.File
	names := slices.Clone(lp.files)
	for _, name := range lp.extra {
		if _, ok := replaced[name]; ok && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	for _, name := range names {
		src, ok := replaced[name]
		if !ok {
			var err error
			if src, err = os.ReadFile(filepath.Join(lp.dir, name)); err != nil {
				return err
			}
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			return err
		}
		files = append(files, f)
	}
	lookup := func(path string) (io.ReadCloser, error) {
		exp, ok := lp.exports[path]
		if !ok || exp == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exp)
	}
	var errs []string
	conf := types.Config{
		Importer: importer.ForCompiler(fset, "gc", lookup),
		Error:    func(err error) { errs = append(errs, "  "+err.Error()) },
	}
	conf.Check(filepath.Base(lp.dir), fset, files, nil)
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}
