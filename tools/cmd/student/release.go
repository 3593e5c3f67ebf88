package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"go/build/constraint"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"serverlab/tools/internal/coursesum"
)

// The student release is the course without the maintainers' rooms — the
// reference solutions, their machinery and catalogues (tools/maint/), CI — and
// every Go file that builds only with the "solutions" tag. It adds a pristine
// copy of chapters/ in .starter/, from which make reset restores stubs, and
// tools/internal/grade/course.sum, the list of the course files it ships by git blob
// id: the release has no git history, and the grader builds with these
// copies whatever the student's checkout holds (tools/internal/grade/pristine.go).
// A Markdown section headed "For maintainers" stays in the maintainers' tree
// too (shippedMarkdown).
var (
	// maintainerOnly are the maintainers' rooms (relative to the root): the
	// reference solutions, their machinery and data (tools/maint: the ladder,
	// the mutant and forgery catalogues, stress, interop, soak) and CI; then
	// what a checkout may hold that is no part of the course (build output,
	// backups, git). Whole rooms, never files inside a shipped one.
	maintainerOnly = []string{"solutions", "tools/maint", ".ci", "dist", ".backup", ".git"}
	// releaseTag is the build tag of the solution-backed tests.
	releaseTag = "solutions"
)

// release writes the student release to out (relative to the root unless
// absolute): a tar.gz whose files are under serverlab/.
func (c *course) release(w io.Writer, out string) error {
	files, from, err := c.sourceFiles()
	if err != nil {
		return err
	}
	var ship, starter []string
	left := 0
	for _, rel := range files {
		if rel == coursesum.Path {
			continue // an old list (a release made from a release): written anew below
		}
		keep, err := c.shipped(rel)
		if err != nil {
			return err
		}
		if !keep {
			left++
			continue
		}
		ship = append(ship, rel)
		if strings.HasPrefix(rel, "chapters/") && !fileExists(filepath.Join(c.root, starterDir)) {
			starter = append(starter, rel)
		}
	}
	if !filepath.IsAbs(out) {
		out = filepath.Join(c.root, out)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	// The archive is written beside out and renamed over it at the end: a
	// failure (or ^C) leaves the previous release whole, never a truncated one.
	f, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // a no-op once renamed
	sum, listed, err := c.courseSum(ship)
	if err != nil {
		f.Close()
		return err
	}
	if err := c.writeArchive(f, ship, starter, sum); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), out); err != nil {
		return err
	}
	rel, err := filepath.Rel(c.root, out)
	if err != nil || strings.HasPrefix(rel, "..") {
		rel = out
	}
	fmt.Fprintf(w, "wrote %s: %d files from %s, %d maintainer-only files left out (solutions/, tools/maint/, .ci/, files tagged %q); chapters/ also as %s/ for make reset; %s lists its %d course files\n",
		filepath.ToSlash(rel), len(ship), from, left, releaseTag, starterDir, coursesum.Path, listed)
	return nil
}

// courseSum lists the course files among ship (coursesum.IsCourseFile) with
// the blob ids of what the release holds: the grader's list in the release,
// and how many files it lists.
func (c *course) courseSum(ship []string) (string, int, error) {
	files := map[string]string{}
	for _, rel := range ship {
		if !coursesum.IsCourseFile(rel) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(c.root, filepath.FromSlash(rel)))
		if err != nil {
			return "", 0, err
		}
		files[rel] = coursesum.BlobID(b)
	}
	return coursesum.Format(files), len(files), nil
}

// sourceFiles lists the course's files: git's tracked files in a git
// checkout (so that build output and editor files stay out), every file
// that .gitignore does not exclude in an exported tree.
func (c *course) sourceFiles() ([]string, string, error) {
	if top, err := c.git("rev-parse", "--show-toplevel"); err == nil && samePath(strings.TrimSpace(top), c.root) {
		out, err := c.git("ls-files", "-z")
		if err != nil {
			return nil, "", err
		}
		var files []string
		for _, f := range strings.Split(strings.TrimRight(out, "\x00"), "\x00") {
			if f != "" && fileExists(filepath.Join(c.root, filepath.FromSlash(f))) {
				files = append(files, f)
			}
		}
		slices.Sort(files)
		return files, "git ls-files (the working tree's content)", nil
	}
	ignore := readIgnore(filepath.Join(c.root, ".gitignore"))
	var files []string
	err := filepath.WalkDir(c.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(c.root, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if ignore.match(rel, d.IsDir()) || d.IsDir() && d.Name() == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			files = append(files, rel)
		}
		return nil
	})
	slices.Sort(files)
	return files, "the folder (no git)", err
}

func samePath(a, b string) bool {
	ea, err1 := filepath.EvalSymlinks(a)
	eb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && filepath.Clean(ea) == filepath.Clean(eb)
}

// shipped says whether a file goes into the release.
func (c *course) shipped(rel string) (bool, error) {
	for _, dir := range maintainerOnly {
		if rel == dir || strings.HasPrefix(rel, dir+"/") {
			return false, nil
		}
	}
	if !strings.HasSuffix(rel, ".go") {
		return true, nil
	}
	needs, err := needsTag(filepath.Join(c.root, filepath.FromSlash(rel)), releaseTag)
	return !needs, err
}

// needsTag says whether a Go file builds only when tag is set: its
// //go:build line is false without tag, whatever the other tags are.
func needsTag(file, tag string) (bool, error) {
	f, err := os.Open(file)
	if err != nil {
		return false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "//") && !constraint.IsGoBuild(line) {
			continue
		}
		if !constraint.IsGoBuild(line) {
			return false, nil // the constraint must come before the package clause
		}
		expr, err := constraint.Parse(line)
		if err != nil {
			return false, fmt.Errorf("%s: %w", file, err)
		}
		return !satisfiable(expr, tag), nil
	}
	return false, sc.Err()
}

// satisfiable says whether some setting of the expression's other tags makes
// it true while tag is unset.
func satisfiable(expr constraint.Expr, tag string) bool {
	var others []string
	var collect func(constraint.Expr)
	collect = func(e constraint.Expr) {
		switch e := e.(type) {
		case *constraint.TagExpr:
			if e.Tag != tag && !slices.Contains(others, e.Tag) {
				others = append(others, e.Tag)
			}
		case *constraint.NotExpr:
			collect(e.X)
		case *constraint.AndExpr:
			collect(e.X)
			collect(e.Y)
		case *constraint.OrExpr:
			collect(e.X)
			collect(e.Y)
		}
	}
	collect(expr)
	for set := 0; set < 1<<len(others); set++ {
		if expr.Eval(func(t string) bool {
			i := slices.Index(others, t)
			return i >= 0 && set&(1<<i) != 0
		}) {
			return true
		}
	}
	return false
}

// writeArchive writes the files under serverlab/, starter again under
// serverlab/.starter/, and sum as serverlab/tools/internal/grade/course.sum.
func (c *course) writeArchive(w io.Writer, files, starter []string, sum string) error {
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	add := func(name, rel string) error {
		p := filepath.Join(c.root, filepath.FromSlash(rel))
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		mode := int64(0o644)
		if fi.Mode()&0o111 != 0 {
			mode = 0o755
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if path.Ext(rel) == ".md" {
			b = shippedMarkdown(b)
		}
		if path.Ext(rel) == ".go" && strings.HasPrefix(rel, "chapters/") {
			b = shippedGo(b)
		}
		hdr := &tar.Header{Name: "serverlab/" + name, Mode: mode, Size: int64(len(b)), ModTime: fi.ModTime(), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err = io.Copy(tw, bytes.NewReader(b))
		return err
	}
	for _, rel := range files {
		if err := add(rel, rel); err != nil {
			return err
		}
	}
	for _, rel := range starter {
		if err := add(starterDir+"/"+rel, rel); err != nil {
			return err
		}
	}
	hdr := &tar.Header{Name: "serverlab/" + coursesum.Path, Mode: 0o644, Size: int64(len(sum)), ModTime: time.Now(), Typeflag: tar.TypeReg}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if _, err := io.WriteString(tw, sum); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// maintainersSection is the title of a Markdown section that the release
// leaves out: how to prove, measure and release the course, which a student's
// tree cannot do (it has no solutions/).
const maintainersSection = "For maintainers"

// shippedMarkdown is a Markdown file as the release ships it: without its
// sections titled maintainersSection, each up to the next heading of its
// level or above (headings inside code fences are not headings).
func shippedMarkdown(b []byte) []byte {
	var out bytes.Buffer
	fence, skipLevel := false, 0
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
		}
		if level := headingLevel(line); !fence && level > 0 {
			title := strings.TrimSpace(strings.TrimLeft(line, "#"))
			switch {
			case skipLevel > 0 && level > skipLevel:
			case title == maintainersSection:
				skipLevel = level
			default:
				skipLevel = 0
			}
		}
		if skipLevel == 0 {
			out.WriteString(line)
		}
	}
	return out.Bytes()
}

// headingLevel is the level of a Markdown ATX heading (1 for "# x"), or 0.
func headingLevel(line string) int {
	n := len(line) - len(strings.TrimLeft(line, "#"))
	if n == 0 || n > 6 || len(line) > n && line[n] != ' ' {
		return 0
	}
	return n
}

// ignoreRules is the subset of .gitignore the course uses: one pattern per
// line, "/" at the start anchors it to the root, "/" at the end matches
// folders only, otherwise it matches a file or folder name at any depth.
type ignoreRules []string

func readIgnore(file string) ignoreRules {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	var rules ignoreRules
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "!") {
			rules = append(rules, l)
		}
	}
	return rules
}

func (r ignoreRules) match(rel string, isDir bool) bool {
	for _, pat := range r {
		dirOnly := strings.HasSuffix(pat, "/")
		pat = strings.TrimSuffix(pat, "/")
		if dirOnly && !isDir {
			continue
		}
		if anchored := strings.HasPrefix(pat, "/"); anchored || strings.Contains(pat, "/") {
			if ok, _ := path.Match(strings.TrimPrefix(pat, "/"), rel); ok {
				return true
			}
			continue
		}
		if ok, _ := path.Match(pat, path.Base(rel)); ok {
			return true
		}
	}
	return false
}
