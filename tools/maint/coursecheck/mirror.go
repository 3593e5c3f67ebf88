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
	"errors"
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
	err := filepath.WalkDir(chDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(chDir, p)
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
	return out, err
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

// tidyImports drops the imports src no longer uses (the answer's) and adds
// those of the chapter's own file that its stubs use, keeping the solution's
// import block as it is written otherwise.
func tidyImports(src, chSrc []byte) ([]byte, error) {
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
	for p, name := range importsOf(chSrc) {
		local := name
		if local == "" {
			local = importName(p)
		}
		if !have[p] && used[local] {
			add = append(add, "\t"+strings.TrimSpace(name+" "+strconv.Quote(p))+"\n")
		}
	}
	if len(add) > 0 && lastImport < 0 {
		return nil, errors.New("the stubs need imports the solution's file has no import block for")
	}
	var b strings.Builder
	for i, l := range lines {
		if !drop[i] {
			b.WriteString(l)
		}
		if i == lastImport {
			slices.Sort(add)
			b.WriteString(strings.Join(add, ""))
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
func runMirror(c config, chapters []rubric.Chapter, check bool, stdout, stderr io.Writer) int {
	root, err := filepath.Abs(c.Root)
	if err != nil {
		fmt.Fprintln(stderr, "coursecheck -mirror:", err)
		return grade.ExitError
	}
	stale, bad := 0, 0
	for _, ch := range chapters {
		results, err := mirrorChapter(root, c.Target, c.maint.solutions, ch)
		if err != nil {
			fmt.Fprintln(stderr, "coursecheck -mirror:", err)
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
			stale++
			if check {
				fmt.Fprintf(stdout, "%s is not what its solution makes of it (edit %s, then make chapters)\n", r.rel, strings.Replace(r.rel, c.Target+"/", c.maint.solutions+"/", 1))
				continue
			}
			if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(r.rel)), r.want, 0o644); err != nil {
				fmt.Fprintln(stderr, "coursecheck -mirror:", err)
				return grade.ExitError
			}
			fmt.Fprintf(stdout, "wrote %s\n", r.rel)
		}
	}
	if bad > 0 || check && stale > 0 {
		return grade.ExitRequirement
	}
	return grade.ExitOK
}
