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
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// reset puts back the starter code of one exercise: in every chapter file
// whose starter has the exercise's TODO, the functions that hold it are
// replaced by the starter's (found with go/ast, so the rest of the file — the
// exercises you solved, helpers you added — stays as it is). Imports are
// then adjusted to what the file uses. Each file is copied to a backup folder
// first, and the command says where.
func (c *course) reset(w io.Writer, arg string) error {
	ch, ex, err := c.findExercise(arg)
	if err != nil {
		return err
	}
	if c.currentTrack(ch.ID) == trackOpen {
		return fmt.Errorf("chapter %s is on the open track, which has no stubs to restore: make reset CH=%s MODE=guided puts the guided starter back (your files are backed up), MODE=open the empty server", ch.ID, ch.ID)
	}
	marker := []byte("TODO(ex " + ex.ID + ")")
	starter, source, err := c.starterFiles(ch.ID, marker)
	if err != nil {
		return err
	}
	if len(starter) == 0 {
		return fmt.Errorf("exercise %s has no TODO of its own in the starter (%s): it passes when the exercises it builds on are right; reset those instead", ex.ID, source)
	}
	backup := filepath.Join(".backup", time.Now().Format("20060102-150405")+"-ex"+ex.ID)
	files := slices.Sorted(func(yield func(string) bool) {
		for f := range starter {
			if !yield(f) {
				return
			}
		}
	})
	changed := 0
	for _, rel := range files {
		pristine := starter[rel]
		dst := filepath.Join(c.root, filepath.FromSlash(rel))
		cur, err := os.ReadFile(dst)
		if errors.Is(err, fs.ErrNotExist) {
			if err := writeFile(dst, pristine); err != nil {
				return err
			}
			fmt.Fprintf(w, "%s: was missing; restored the whole file\n", rel)
			changed++
			continue
		}
		if err != nil {
			return err
		}
		next, names, err := spliceFuncs(cur, pristine, marker)
		how := "restored " + strings.Join(names, ", ")
		if err != nil {
			next, how = pristine, fmt.Sprintf("restored the whole file (yours does not parse: %v)", err)
		}
		if bytes.Equal(next, cur) {
			fmt.Fprintf(w, "%s: already the starter's\n", rel)
			continue
		}
		if err := writeFile(filepath.Join(c.root, backup, filepath.FromSlash(rel)), cur); err != nil {
			return fmt.Errorf("backing up %s: %w", rel, err)
		}
		if err := writeFile(dst, next); err != nil {
			return err
		}
		fmt.Fprintf(w, "%s: %s\n", rel, how)
		changed++
	}
	if changed == 0 {
		fmt.Fprintf(w, "exercise %s is already as in the starter (%s); nothing changed\n", ex.ID, source)
		return nil
	}
	fmt.Fprintf(w, "exercise %s is back to its starter code (from %s).\n", ex.ID, source)
	if fileExists(filepath.Join(c.root, backup)) {
		fmt.Fprintf(w, "your version is saved in %s/ (the same paths as in the course)\n", filepath.ToSlash(backup))
	}
	fmt.Fprintf(w, "check: %s\n", c.testCommand(ch, ex))
	return nil
}

// writeFile replaces the file at p whole or not at all (a temporary file
// beside it, renamed over it): a reset stopped half-way leaves the
// student's file as it was, never truncated.
func writeFile(p string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // a no-op once renamed
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), p)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// starterDir is where the student release keeps a pristine copy of
// chapters/ (the go command ignores folders that start with a dot).
const starterDir = ".starter"

// starterFiles returns the starter version of every non-test Go file of the
// chapter that holds marker, by path relative to the root, and says where it
// came from: the release's pristine copy, or else the newest git commit whose
// chapter still has the marker (HEAD in a fresh clone, the commit before your
// solution if you committed one).
func (c *course) starterFiles(ch string, marker []byte) (map[string][]byte, string, error) {
	pristine := filepath.Join(c.root, starterDir)
	if fileExists(filepath.Join(pristine, chapterDir(ch))) {
		files, err := markedFiles(pristine, ch, marker)
		return files, "the release's pristine copy, " + starterDir + "/", err
	}
	if _, err := c.git("rev-parse", "--git-dir"); err != nil {
		return nil, "", errNoStarter
	}
	dir := "chapters/" + ch
	candidates := []string{"HEAD"}
	if out, err := c.git("log", "--format=%H", "-S"+string(marker), "HEAD", "--", dir); err == nil {
		for _, commit := range strings.Fields(out) {
			candidates = append(candidates, commit, commit+"^")
		}
	}
	for _, commit := range candidates {
		out, err := c.git("grep", "-l", "-F", string(marker), commit, "--", dir)
		if err != nil {
			continue // no match in that commit (git grep exits 1)
		}
		files := map[string][]byte{}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			_, rel, ok := strings.Cut(line, ":")
			if !ok || !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
				continue
			}
			src, err := c.git("show", commit+":"+rel)
			if err != nil {
				return nil, "", err
			}
			files[rel] = []byte(src)
		}
		short, _ := c.git("rev-parse", "--short", commit)
		return files, "git commit " + strings.TrimSpace(short), nil
	}
	return map[string][]byte{}, "git history", nil
}

// markedFiles reads the chapter's non-test Go files under base that contain
// marker.
func markedFiles(base, ch string, marker []byte) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := filepath.WalkDir(filepath.Join(base, chapterDir(ch)), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(src, marker) {
			rel, _ := filepath.Rel(base, p)
			files[filepath.ToSlash(rel)] = src
		}
		return nil
	})
	return files, err
}

func (c *course) git(args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", c.root}, args...)...)
	out, err := cmd.Output()
	return string(out), err
}

// spliceFuncs replaces, in cur, every function that holds marker in
// pristine by pristine's version (adding it if cur lacks it), fixes the
// imports and formats the result. It returns the new source and the names of
// the functions it restored.
func spliceFuncs(cur, pristine, marker []byte) ([]byte, []string, error) {
	fset := token.NewFileSet()
	pf, err := parser.ParseFile(fset, "starter.go", pristine, parser.ParseComments)
	if err != nil {
		return nil, nil, fmt.Errorf("the starter does not parse: %w", err)
	}
	cf, err := parser.ParseFile(fset, "yours.go", cur, parser.ParseComments)
	if err != nil {
		return nil, nil, err
	}
	type span struct{ start, end int }
	spanOf := func(d *ast.FuncDecl) span {
		start := d.Pos()
		if d.Doc != nil {
			start = d.Doc.Pos()
		}
		f := fset.File(d.Pos())
		return span{f.Offset(start), f.Offset(d.End())}
	}
	mine := map[string]span{}
	for _, d := range cf.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok {
			mine[funcKey(fd)] = spanOf(fd)
		}
	}
	type edit struct {
		at   span
		text []byte
	}
	var edits []edit
	var appended [][]byte
	var names []string
	for _, d := range pf.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		s := spanOf(fd)
		text := pristine[s.start:s.end]
		if !bytes.Contains(text, marker) {
			continue
		}
		name := funcKey(fd)
		if others := otherExercises(text, marker); len(others) > 0 {
			name += " (which also holds the TODOs of " + strings.Join(others, ", ") + ")"
		}
		names = append(names, name)
		if at, ok := mine[funcKey(fd)]; ok {
			edits = append(edits, edit{at, text})
		} else {
			appended = append(appended, text)
		}
	}
	slices.SortFunc(edits, func(a, b edit) int { return b.at.start - a.at.start })
	out := slices.Clone(cur)
	for _, e := range edits {
		out = slices.Concat(out[:e.at.start], e.text, out[e.at.end:])
	}
	for _, text := range appended {
		out = slices.Concat(out, []byte("\n\n"), text, []byte("\n"))
	}
	out, err = fixImports(out, pf)
	if err != nil {
		return nil, nil, err
	}
	return out, names, nil
}

var anyMarker = regexp.MustCompile(`TODO\(ex ([0-9]+\.[0-9]+)\)`)

// otherExercises lists the exercises other than marker's whose TODOs text
// holds: restoring it restores their stubs too.
func otherExercises(text, marker []byte) []string {
	var ids []string
	for _, m := range anyMarker.FindAllSubmatch(text, -1) {
		if id := string(m[1]); !bytes.Equal(m[0], marker) && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// funcKey names a function or method: "Serve" or "(*Server).Serve".
func funcKey(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	star := ""
	if s, ok := t.(*ast.StarExpr); ok {
		star, t = "*", s.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok { // generic receiver
		t = ix.X
	}
	if ix, ok := t.(*ast.IndexListExpr); ok {
		t = ix.X
	}
	name := "?"
	if id, ok := t.(*ast.Ident); ok {
		name = id.Name
	}
	return "(" + star + name + ")." + fd.Name.Name
}

var versionElem = regexp.MustCompile(`^v[0-9]+$`)

// importName is the name an import is used by in the file.
func importName(spec *ast.ImportSpec) string {
	if spec.Name != nil {
		return spec.Name.Name
	}
	p, _ := strconv.Unquote(spec.Path.Value)
	base := path.Base(p)
	if versionElem.MatchString(base) && path.Dir(p) != "." {
		base = path.Base(path.Dir(p))
	}
	return base
}

// fixImports makes src import exactly what it uses: imports left unused by
// the restored stubs are removed, and those the stubs need are taken from
// the starter.
func fixImports(src []byte, starter *ast.File) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "restored.go", src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Obj == nil {
				used[id.Name] = true
			}
		}
		return true
	})
	var keep []*ast.ImportSpec
	have := map[string]bool{}
	for _, spec := range f.Imports {
		name := importName(spec)
		if name == "_" || name == "." || used[name] {
			keep = append(keep, spec)
			have[name] = true
		}
	}
	for _, spec := range starter.Imports {
		if name := importName(spec); used[name] && !have[name] {
			keep = append(keep, spec)
			have[name] = true
		}
	}
	if len(keep) == len(f.Imports) {
		return format.Source(src)
	}
	// Rewrite the import declarations as one block where the first one was:
	// the standard library first, then the rest, as gofmt users write them.
	var block bytes.Buffer
	if len(keep) > 0 {
		block.WriteString("import (\n")
		for _, std := range []bool{true, false} {
			wrote := false
			for _, spec := range keep {
				p, _ := strconv.Unquote(spec.Path.Value)
				first := strings.Split(p, "/")[0]
				if isStd := !strings.Contains(first, ".") && first != "serverlab"; isStd != std {
					continue
				}
				if !std && !wrote && block.Len() > len("import (\n") {
					block.WriteString("\n")
				}
				wrote = true
				block.WriteString("\t")
				if spec.Name != nil {
					block.WriteString(spec.Name.Name + " ")
				}
				block.WriteString(spec.Path.Value + "\n")
			}
		}
		block.WriteString(")")
	}
	tf := fset.File(f.Pos())
	out := slices.Clone(src)
	for i := len(f.Decls) - 1; i >= 0; i-- {
		gd, ok := f.Decls[i].(*ast.GenDecl)
		if !ok || gd.Tok != token.IMPORT {
			continue
		}
		start, end := tf.Offset(gd.Pos()), tf.Offset(gd.End())
		text := []byte(nil)
		if isFirstImport(f, gd) {
			text = block.Bytes()
		}
		out = slices.Concat(out[:start], text, out[end:])
	}
	return format.Source(out)
}

func isFirstImport(f *ast.File, gd *ast.GenDecl) bool {
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
			return g == gd
		}
	}
	return false
}
