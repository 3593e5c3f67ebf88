package rooms

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The map covers the whole tree, and every list it (or a page that points
// to it) gives of something the code defines is derived or checked here:
// a list nobody checks goes stale the day a maintainer adds an entry
// (issue 37, newcomer4's notes). The properties:
//   - every package at any depth is named by its room's row, or lies under
//     a folder the row names as a subtree ("`bench/peers/…`");
//   - every top-level entry of the module (file or folder) is named in a
//     row of the map's tables, and every file of docs/ in the docs/ row;
//   - the student command's subcommands, the packages whose tests carry the
//     solutions build tag, and the chapters with an open track are what
//     the code says, wherever a page lists them.

// nestedPackages lists the packages below a room's top folders (dir
// relative to the module), as "dir/a/b/": tenants adds them to the row's
// duties, so that a package two folders down is on the map too.
func nestedPackages(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	base := filepath.Join(root, dir)
	err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if d.Name() == "testdata" {
			return fs.SkipDir
		}
		rel, _ := filepath.Rel(base, p)
		if !strings.Contains(filepath.ToSlash(rel), "/") {
			return nil // the room itself, or a top folder: tenants has it
		}
		if goFiles, _ := filepath.Glob(filepath.Join(p, "*.go")); len(goFiles) > 0 {
			out = append(out, dir+"/"+filepath.ToSlash(rel)+"/")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// underSubtree says whether a row names a folder above p as a whole
// subtree, "`folder/…`" (whole or relative to the room's folder).
func underSubtree(row, p string, r Room) bool {
	for dir := strings.TrimSuffix(p, "/"); strings.Contains(dir, "/"); dir = dir[:strings.LastIndex(dir, "/")] {
		rel, _ := strings.CutPrefix(dir, roomDir[r]+"/")
		if strings.Contains(row, "`"+dir+"/…`") || strings.Contains(row, "`"+rel+"/…`") {
			return true
		}
	}
	return false
}

// mapTableText is every table row of the map page, one string.
func mapTableText(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, row := range mapRows(t) {
		b.WriteString(row)
		b.WriteByte('\n')
	}
	return b.String()
}

// TestMapCoversTheTopFolder: every entry of the module's top folder that
// git does not ignore (.ci/, .devcontainer/, Makefile, go.mod, …) is named
// in backquotes in a row of the map's tables.
func TestMapCoversTheTopFolder(t *testing.T) {
	rows := mapTableText(t)
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if name == ".git" || ignored(name) {
			continue
		}
		if e.IsDir() {
			name += "/"
		}
		if !mentions(rows, name) && !(e.IsDir() && mentions(rows, strings.ReplaceAll(name, "chapters/", "chapters/NN/"))) {
			t.Errorf("%s: no row of its tables names `%s`, an entry of the module's top folder: add it to the top folder's row (or a room's), with what it is for", mapPage, name)
		}
	}
}

// ignored says whether git ignores a top-level name (build output); without
// git (a plain folder) nothing is.
func ignored(name string) bool {
	return exec.Command("git", "-C", root, "check-ignore", "-q", name).Run() == nil
}

// TestMapDocsRowNamesEveryPage: the docs/ row names every file and folder
// of docs/ (a chapter's number written NN: `chNN-deep-dive.md`).
func TestMapDocsRowNamesEveryPage(t *testing.T) {
	row, ok := mapRows(t)["`docs/`"]
	if !ok {
		t.Fatalf("%s has no row whose first cell is `docs/`", mapPage)
	}
	entries, err := os.ReadDir(filepath.Join(root, "docs"))
	if err != nil {
		t.Fatal(err)
	}
	chNN := regexp.MustCompile(`ch\d\d`)
	seen := map[string]bool{}
	for _, e := range entries {
		name := chNN.ReplaceAllString(e.Name(), "chNN")
		if e.IsDir() {
			name += "/"
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		if !mentions(row, name) {
			t.Errorf("%s: the docs/ row does not name `%s`: add it, with what it is for", mapPage, name)
		}
	}
}

// studentCommands are the subcommands tools/cmd/student's main switch
// accepts (help aside).
func studentCommands(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(root, "tools/cmd/student/main.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	ast.Inspect(f, func(n ast.Node) bool {
		sw, ok := n.(*ast.SwitchStmt)
		if !ok {
			return true
		}
		if id, ok := sw.Tag.(*ast.Ident); !ok || id.Name != "cmd" {
			return true
		}
		for _, s := range sw.Body.List {
			for _, e := range s.(*ast.CaseClause).List {
				if lit, ok := e.(*ast.BasicLit); ok {
					if v, _ := strconv.Unquote(lit.Value); v != "" && !strings.HasPrefix(v, "-") && v != "help" {
						cmds = append(cmds, v)
					}
				}
			}
		}
		return false
	})
	if len(cmds) == 0 {
		t.Fatal("tools/cmd/student/main.go: no switch on cmd found: update studentCommands")
	}
	return cmds
}

// TestMapListsStudentCommands: the tools/cmd/ row's "`student` (a, b, …)"
// is the student command's subcommands, every one.
func TestMapListsStudentCommands(t *testing.T) {
	row := mapRows(t)["`tools/cmd/`"]
	m := regexp.MustCompile("`student` \\(([^)]*)\\)").FindStringSubmatch(row)
	if m == nil {
		t.Fatalf("%s: the tools/cmd/ row has no \"`student` (…)\" list of its subcommands", mapPage)
	}
	var said []string
	for _, s := range strings.Split(m[1], ",") {
		said = append(said, strings.TrimSpace(s))
	}
	want := studentCommands(t)
	slices.Sort(said)
	slices.Sort(want)
	if !slices.Equal(said, want) {
		t.Errorf("%s: the tools/cmd/ row lists student's subcommands as %v; tools/cmd/student/main.go has %v", mapPage, said, want)
	}
}

// taggedPackages are the packages outside solutions/ with a test file built
// only with the solutions tag, as "tools/cmd/chat".
func taggedPackages(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, dir := range []string{"tools", "tests"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, "_test.go") {
				return err
			}
			if tagged(t, p) {
				rel, _ := filepath.Rel(root, filepath.Dir(p))
				if rel = filepath.ToSlash(rel); !slices.Contains(out, rel) {
					out = append(out, rel)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(out)
	return out
}

var buildSolutions = regexp.MustCompile(`^//go:build .*\bsolutions\b`)

func tagged(t *testing.T, p string) bool {
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if buildSolutions.MatchString(line) && !strings.Contains(line, "!solutions") {
			return true
		}
		if strings.HasPrefix(line, "package ") {
			return false
		}
	}
	return false
}

// namesPackage says whether text names the package at rel ("tools/cmd/chat"
// but not as the start of "tools/cmd/chatcore-client").
func namesPackage(text, rel string) bool {
	return regexp.MustCompile(regexp.QuoteMeta(rel) + `([^\w-]|$)`).MatchString(text)
}

// pagesThatList are the pages a maintainer reads a list of the course's
// parts in.
var pagesThatList = []string{"README.md", "CONTRIBUTING.md", "Makefile", "tools/README.md", "docs/architecture.md", "docs/grading.md", "chapters/README.md"}

// paragraphs splits a page at its blank lines.
func paragraphs(t *testing.T, page string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, page))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n\n")
}

// TestTaggedTestsAreListedWhole: the map names every package whose tests
// carry the solutions tag, and a paragraph of any other page that speaks
// of the tag names all of them or none (better: none, and a link).
func TestTaggedTestsAreListedWhole(t *testing.T) {
	pkgs := taggedPackages(t)
	if len(pkgs) == 0 {
		t.Fatal("no test file carries //go:build solutions: update this test")
	}
	for _, page := range pagesThatList {
		for _, para := range paragraphs(t, page) {
			if !strings.Contains(para, "-tags solutions") && !strings.Contains(para, "go:build solutions") &&
				!strings.Contains(para, "solution-backed") && !strings.Contains(para, "arrow into `solutions/`") {
				continue
			}
			var named, missing []string
			for _, p := range pkgs {
				if namesPackage(para, p) {
					named = append(named, p)
				} else {
					missing = append(missing, p)
				}
			}
			isMap := page == "docs/architecture.md" && strings.Contains(para, solutionsSentence)
			if len(named) > 0 && len(missing) > 0 || isMap && len(missing) > 0 {
				first, _, _ := strings.Cut(strings.TrimSpace(para), "\n")
				t.Errorf("%s, the paragraph %q…: names %v as having -tags solutions tests, not %v: name them all (the map) or none (link the map)", page, first, named, missing)
			}
		}
	}
}

// openChapters are the chapters with an open track (testdata/open/KEEP).
func openChapters(t *testing.T) []string {
	t.Helper()
	keeps, err := filepath.Glob(filepath.Join(root, "chapters", "*", "testdata", "open", "KEEP"))
	if err != nil || len(keeps) == 0 {
		t.Fatalf("no chapter has testdata/open/KEEP (%v): update this test", err)
	}
	var out []string
	for _, k := range keeps {
		out = append(out, filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(k)))))
	}
	slices.Sort(out)
	return out
}

var (
	fromChapterOn = regexp.MustCompile(`(?i)from chapter (\d\d) on`)
	chapterRange  = regexp.MustCompile(`(?i)chapters (\d\d) ?(?:–|-|to) ?(\d\d)`)
)

// TestOpenTrackRangeIsTheTree: wherever a page says which chapters have an
// open track, the range is the chapters with testdata/open/KEEP ("from
// chapter 03 on" was wrong the day 08 came without one).
func TestOpenTrackRangeIsTheTree(t *testing.T) {
	open := openChapters(t)
	first, last := open[0], open[len(open)-1]
	a, _ := strconv.Atoi(first)
	b, _ := strconv.Atoi(last)
	if len(open) != b-a+1 {
		t.Fatalf("the open track is in chapters %v: not one range; the pages say a range, so say it otherwise", open)
	}
	entries, _ := os.ReadDir(filepath.Join(root, "chapters"))
	lastChapter := ""
	for _, e := range entries {
		if isChapter(e.Name()) {
			lastChapter = e.Name()
		}
	}
	var lessons []string
	for _, e := range entries {
		if isChapter(e.Name()) {
			lessons = append(lessons, "chapters/"+e.Name()+"/README.md")
		}
	}
	for _, page := range append(slices.Clone(pagesThatList), lessons...) {
		for _, para := range paragraphs(t, page) {
			if !strings.Contains(strings.ToLower(para), "open track") && !strings.Contains(para, "MODE=open") {
				continue
			}
			for _, m := range fromChapterOn.FindAllStringSubmatch(para, -1) {
				if m[1] != first || lastChapter != last {
					t.Errorf("%s: %q: the open track is in chapters %s–%s (testdata/open/KEEP), the course runs to %s: say \"chapters %s–%s\"", page, m[0], first, last, lastChapter, first, last)
				}
			}
			for _, m := range chapterRange.FindAllStringSubmatch(para, -1) {
				if m[1] != first || m[2] != last {
					t.Errorf("%s: %q: the open track is in chapters %s–%s (testdata/open/KEEP)", page, m[0], first, last)
				}
			}
		}
	}
}
