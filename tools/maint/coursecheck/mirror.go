// The mirror (make chapters): chapters/NN is generated from solutions/NN, so
// that the code a chapter gives the student is written once. The solution is
// the home of every given declaration, of every file without stubs, and of
// each file's order, header and comments; the chapter is the home only of its
// stubs (the declarations with a TODO(ex N.K)) and of the files only it has
// (the lesson, todo.go, the open track), and of the few given declarations
// marked //mirror:keep that the solution changes by design. A file the solution has and the
// chapter does not stays out of the chapter (its helpers are the answer).

package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"serverlab/tools/internal/grade"
	"serverlab/tools/internal/rubric"
)

// keepMark in a chapter's declaration keeps it as the chapter has it, with
// the reason after it: given code the solution changes by design (a fast
// path of its own, say). A stub needs no mark: its TODO(ex …) is one.
const keepMark = "//mirror:keep"

// mirrorResult is what the mirror makes of one chapter file.
type mirrorResult struct {
	rel      string // relative to the module root
	want     []byte // what the file should hold
	have     []byte // what it holds
	problems []string
}

// mirrorChapter works out every file chapters/NN shares with solutions/NN
// (root absolute, chapter and solution trees relative to it).
func mirrorChapter(root, chTree, solTree string, ch rubric.Chapter) ([]mirrorResult, error) {
	chDir := filepath.Join(root, chTree, ch.ID)
	solDir := filepath.Join(root, solTree, ch.ID)
	var out []mirrorResult
	var solPkg *packageDecls // read when the first open-track file needs it
	err := filepath.WalkDir(chDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(chDir, p)
		if isOpenTrack(rel) {
			if solPkg == nil {
				if solPkg, err = readPackageDecls(solDir, chTree, solTree, ch.ID); err != nil {
					return err
				}
			}
			have, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			r := mirrorResult{rel: filepath.ToSlash(filepath.Join(chTree, ch.ID, rel)), have: have}
			if r.want, r.problems, err = mirrorOpen(filepath.Base(p), have, solPkg); err != nil {
				return fmt.Errorf("%s: %w", r.rel, err)
			}
			out = append(out, r)
			return nil
		}
		solPath := filepath.Join(solDir, rel)
		sol, err := os.ReadFile(solPath)
		if os.IsNotExist(err) {
			return nil // only the chapter has it
		}
		if err != nil {
			return err
		}
		have, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		r := mirrorResult{rel: filepath.ToSlash(filepath.Join(chTree, ch.ID, rel)), have: have}
		sol = inChapter(sol, chTree, solTree, ch.ID)
		if strings.HasSuffix(p, ".go") {
			r.want, r.problems, err = mirrorGo(filepath.Base(p), have, sol)
			if err != nil {
				return fmt.Errorf("%s: %w", r.rel, err)
			}
		} else {
			r.want = sol
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	missing, err := newFiles(chDir, solDir, filepath.ToSlash(filepath.Join(chTree, ch.ID)), out)
	return append(out, missing...), err
}

// inChapter rewrites the solution's references to itself ("serverlab/
// solutions/07", "solutions/07/…") as the chapter's.
func inChapter(src []byte, chTree, solTree, id string) []byte {
	self := regexp.MustCompile(`\b` + regexp.QuoteMeta(solTree+"/"+id) + `\b`)
	return self.ReplaceAll(src, []byte(chTree+"/"+id))
}

// mirrorGo is the chapter's Go file: the solution's, with each declaration
// the chapter stubs (a TODO(ex …) in it) replaced by the stub, and the
// solution's declarations the chapter lacks left out; the imports are then
// the ones the result uses.
func mirrorGo(name string, chSrc, solSrc []byte) ([]byte, []string, error) {
	chDecls, err := declsOf(name, chSrc)
	if err != nil {
		return nil, nil, err
	}
	solDecls, err := declsOf(name, solSrc)
	if err != nil {
		return nil, nil, err
	}
	stubs := map[string][]topDecl{} // by key, in order: several func init or var _ may share one
	inChapterFile := map[string]int{}
	var problems []string
	for _, d := range chDecls {
		if d.isImport {
			continue
		}
		inChapterFile[d.key]++
		if len(d.todos) > 0 || strings.Contains(d.text, keepMark) {
			stubs[d.key] = append(stubs[d.key], d)
		}
	}
	inSolution := map[string]int{}
	for _, d := range solDecls {
		inSolution[d.key]++
	}
	for _, d := range chDecls {
		if d.isImport || inSolution[d.key] > 0 {
			continue
		}
		if len(d.todos) == 0 {
			problems = append(problems, fmt.Sprintf("%s: the given declaration %s is only in the chapter: move it to the solution, the home of given code", name, d.key))
		} else {
			problems = append(problems, fmt.Sprintf("%s: the stub %s has no declaration of the solution to stand for", name, d.key))
		}
	}
	var b bytes.Buffer
	pos := 0
	seen := map[string]int{}
	for _, d := range solDecls {
		if d.isImport {
			continue
		}
		n := seen[d.key]
		seen[d.key]++
		switch {
		case n < len(stubs[d.key]):
			b.Write(solSrc[pos:d.start])
			b.WriteString(stubs[d.key][n].text)
		case n >= inChapterFile[d.key]:
			b.Write(solSrc[pos:d.start]) // the answer's own helper: left out, with the blank lines after it
			end := d.end
			for end < len(solSrc) && solSrc[end] == '\n' {
				end++
			}
			pos = end
			continue
		default:
			b.Write(solSrc[pos:d.end])
		}
		pos = d.end
	}
	b.Write(solSrc[pos:])
	if bytes.Equal(b.Bytes(), solSrc) {
		return solSrc, problems, nil
	}
	src, err := tidyImports(b.Bytes(), chSrc)
	return src, problems, err
}

// openTrackDir holds a chapter's open-track starter (make reset CH=NN MODE=open).
const openTrackDir = "testdata/open/"

// isOpenTrack says whether rel (relative to the chapter) is a Go file of the
// open track's starter.
func isOpenTrack(rel string) bool {
	rel = filepath.ToSlash(rel)
	return strings.HasPrefix(rel, openTrackDir) && strings.HasSuffix(rel, ".go")
}

// packageDecls are the top-level declarations of a solution's package (its
// non-test Go files in the chapter's folder), by key, with the sources for
// their imports.
type packageDecls struct {
	text    map[string]string // key → the declaration, doc comment included
	where   map[string]string // key → the file that declares it
	twice   map[string]bool   // declared in two files (build-tag variants)
	sources [][]byte
}

// readPackageDecls reads the solution package in solDir, its references to
// itself rewritten as the chapter's.
func readPackageDecls(solDir, chTree, solTree, id string) (*packageDecls, error) {
	files, err := filepath.Glob(filepath.Join(solDir, "*.go"))
	if err != nil {
		return nil, err
	}
	pkg := &packageDecls{text: map[string]string{}, where: map[string]string{}, twice: map[string]bool{}}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		src = inChapter(src, chTree, solTree, id)
		decls, err := declsOf(filepath.Base(f), src)
		if err != nil {
			return nil, err
		}
		pkg.sources = append(pkg.sources, src)
		for _, d := range decls {
			if d.isImport {
				continue
			}
			if _, dup := pkg.text[d.key]; dup {
				pkg.twice[d.key] = true
			}
			pkg.text[d.key], pkg.where[d.key] = d.text, filepath.Base(f)
		}
	}
	return pkg, nil
}

// mirrorOpen is an open-track starter file: its own header, order and
// declarations that carry a TODO(ex …) or //mirror:keep (the server whose
// design is the student's), and, for every other declaration, the
// solution's, from whichever file of the package declares it. A declaration
// in neither is a problem: it must be marked as the open track's own, or
// move to the solution.
func mirrorOpen(name string, openSrc []byte, sol *packageDecls) ([]byte, []string, error) {
	decls, err := declsOf(name, openSrc)
	if err != nil {
		return nil, nil, err
	}
	var b bytes.Buffer
	var problems []string
	pos := 0
	for _, d := range decls {
		if d.isImport || len(d.todos) > 0 || strings.Contains(d.text, keepMark) {
			continue
		}
		text, ok := sol.text[d.key]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s%s: %s is in no file of the solution: mark it %s (the open track's own) or move it to the solution", openTrackDir, name, d.key, keepMark))
			continue
		case sol.twice[d.key]:
			problems = append(problems, fmt.Sprintf("%s%s: %s has a declaration per build tag in the solution: mark the open track's %s", openTrackDir, name, d.key, keepMark))
			continue
		}
		b.Write(openSrc[pos:d.start])
		b.WriteString(text)
		pos = d.end
	}
	b.Write(openSrc[pos:])
	if bytes.Equal(b.Bytes(), openSrc) {
		return openSrc, problems, nil
	}
	src, err := tidyImports(b.Bytes(), sol.sources...)
	return src, problems, err
}

// tidyImports drops the imports src no longer uses (the answer's) and adds
// those of the other files (the chapter's own file, whose stubs may use
// them, or the solution's) that src uses, keeping src's import block as it
// is written otherwise.
func tidyImports(src []byte, from ...[]byte) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments)
	if err != nil {
		return nil, fmt.Errorf("the mirrored file does not parse: %w", err)
	}
	used := usedNames(f)
	lines := strings.SplitAfter(string(src), "\n")
	have := map[string]bool{}
	drop := map[int]bool{}
	lastImport := -1
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		have[p] = true
		line := fset.Position(im.Pos()).Line - 1
		lastImport = max(lastImport, fset.Position(im.End()).Line-1)
		if name := importLocal(im, p); name != "_" && name != "." && !used[name] {
			drop[line] = true
		}
	}
	var add []string
	for p, name := range importsOf(from...) {
		local := name
		if local == "" {
			local = importName(p)
		}
		if !have[p] && used[local] {
			add = append(add, "\t"+strings.TrimSpace(name+" "+strconv.Quote(p))+"\n")
		}
	}
	slices.Sort(add)
	block := strings.Join(add, "")
	if lastImport < 0 && len(add) > 0 { // no import block yet: one after the package clause
		lastImport = fset.Position(f.Name.End()).Line - 1
		block = "\nimport (\n" + block + ")\n"
	}
	var b strings.Builder
	for i, l := range lines {
		if !drop[i] {
			b.WriteString(l)
		}
		if i == lastImport {
			b.WriteString(block)
		}
	}
	return format.Source([]byte(b.String()))
}

// usedNames are the identifiers a file uses as package qualifiers.
func usedNames(f *ast.File) map[string]bool {
	used := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				used[id.Name] = true
			}
		}
		return true
	})
	return used
}

// importLocal is the name an import is known by in the file.
func importLocal(im *ast.ImportSpec, p string) string {
	if im.Name != nil {
		return im.Name.Name
	}
	return importName(p)
}

// runMirror writes (or, with check, only compares) every chapter's mirror.
// It works out every chapter first and writes nothing when any file has a
// problem: a refusal that came after some files were written would leave a
// chapter half made, its given code calling what its stubs do not declare
// yet (the chapter would not compile). Each file is then replaced whole
// (writeAtomic), so that an interrupted run leaves no file half written.
func runMirror(c config, chapters []rubric.Chapter, check bool, stdout, stderr io.Writer) int {
	root, err := filepath.Abs(c.Root)
	if err != nil {
		fmt.Fprintln(stderr, "coursecheck -mirror:", err)
		return grade.ExitError
	}
	var stale []mirrorResult
	bad := 0
	for _, ch := range chapters {
		results, err := mirrorChapter(root, c.Target, c.maint.solutions, ch)
		if err != nil {
			fmt.Fprintln(stderr, "coursecheck -mirror:", err)
			if !check {
				fmt.Fprintln(stderr, "coursecheck -mirror: wrote nothing")
			}
			return grade.ExitError
		}
		for _, r := range results {
			for _, p := range r.problems {
				fmt.Fprintf(stdout, "%s/%s: %s\n", c.Target, ch.ID, p)
				bad++
			}
			if bytes.Equal(r.want, r.have) {
				continue
			}
			stale = append(stale, r)
			if check {
				home := strings.Replace(r.rel, c.Target+"/", c.maint.solutions+"/", 1)
				if rel := strings.TrimPrefix(r.rel, c.Target+"/"+ch.ID+"/"); isOpenTrack(rel) {
					home = fmt.Sprintf("the shared declarations in %s/%s/, the open track's own (%s) here", c.maint.solutions, ch.ID, keepMark)
				}
				fmt.Fprintf(stdout, "%s is not what its solution makes of it (edit %s, then make chapters)\n", r.rel, home)
			}
		}
	}
	if check {
		if bad > 0 || len(stale) > 0 {
			return grade.ExitRequirement
		}
		return grade.ExitOK
	}
	if bad > 0 {
		fmt.Fprintf(stdout, "make chapters: %d problem(s) above; wrote nothing (%d file(s) would change): fix them and run it again\n", bad, len(stale))
		return grade.ExitRequirement
	}
	for _, r := range stale {
		if err := writeAtomic(filepath.Join(root, filepath.FromSlash(r.rel)), r.want); err != nil {
			fmt.Fprintln(stderr, "coursecheck -mirror:", err)
			return grade.ExitError
		}
		fmt.Fprintf(stdout, "wrote %s\n", r.rel)
	}
	return grade.ExitOK
}
