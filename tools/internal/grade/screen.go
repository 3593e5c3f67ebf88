package grade

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"serverlab/tools/internal/rubric"
)

// Screening: before a chapter is built, the grader reads the student's
// non-test Go files with go/ast and looks for what can forge a grade rather
// than earn one. Each rule has a name an instructor can pass to -allow, and
// a chapter's rubric entry can allow rules its own solution needs (one
// source of truth: tools/internal/rubric/rubric.json).
const (
	ruleInit     = "init"     // func init: runs before the harness is ready
	ruleStartup  = "startup"  // package-level initialisers that call anything but a short list of constructors
	ruleExit     = "exit"     // os.Exit, syscall.Exit, unix.Exit: end the process mid-test
	ruleLinkname = "linkname" // //go:linkname: reach the suites' or testkit's unexported code
	ruleUnsafe   = "unsafe"   // import "unsafe": read any memory
	ruleCgo      = "cgo"      // import "C", C/C++/assembly/object files in the package
	ruleImport   = "import"   // imports of the course's tests, the solutions, the grader or another chapter
	ruleArgs     = "args"     // os.Args, the flag package's command line, package testing: the test binary's flags
	ruleProc     = "proc"     // string literals naming /proc: the process's own memory, environment, descriptors
	ruleForbid   = "forbid"   // a given function the rubric forbids in an exercise (ch01: the tools/given/wire codec)
)

// teachOnly are the rules that, under a judge, are named but cost nothing
// (see screenCost).
var teachOnly = map[string]bool{ruleInit: true, ruleStartup: true, ruleExit: true, ruleArgs: true, ruleProc: true}

// The rule names are rubric.Rules; a test keeps the two lists equal.
var screenRules = []string{ruleInit, ruleStartup, ruleExit, ruleLinkname, ruleUnsafe, ruleCgo, ruleImport, ruleArgs, ruleProc, ruleForbid}

// Hit is one thing screening found.
type Hit struct {
	Rule      string
	What      string   // "os.Exit", "func init"
	File      string   // relative to the module root, slash-separated
	Line      int      //
	Exercises []string // the exercises it costs; nil: the whole chapter
}

// String is the message an exercise loses its points with: "os.Exit at
// chapters/01/codec.go:12".
func (h Hit) String() string {
	return fmt.Sprintf("%s at %s:%d (screening rule %q; see docs/grading.md)", h.What, h.File, h.Line, h.Rule)
}

// screenChapter screens the student's files of one chapter: the package in
// dir (relative to root) and its subpackages, except cmd/ (programs, not
// linked into the tests) and testdata. module is the module path; chapterDir
// is target/NN; allowed are the rules switched off (rubric and -allow).
//
// replace is the build's overlay (absolute path → replacement, "" for
// deleted): what is screened is what is built.
func screenChapter(root, module, chapterDir string, spec rubric.Chapter, allowed map[string]bool, replace map[string]string) ([]Hit, error) {
	base := filepath.Join(root, filepath.FromSlash(chapterDir))
	if _, err := os.Stat(base); err != nil {
		return nil, nil // the build reports a missing chapter
	}
	s := &screener{fset: token.NewFileSet(), module: module, chapterDir: chapterDir, spec: spec, replace: replace}
	err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.Type()&fs.ModeSymlink != 0 {
			// The go command follows a link to a folder when it is imported
			// by path: what is behind it is not the student's to bring in.
			s.hit(ruleImport, "a symbolic link ("+d.Name()+")", rel, 1, nil)
			return nil
		}
		if d.IsDir() {
			// Every folder is read, testdata/, _x/ and .x/ too: go test ./...
			// skips them, but an import path can name any of them.
			if p != base && d.Name() == "cmd" && filepath.Dir(p) == base {
				return filepath.SkipDir // the chapter's given commands: never linked into its tests
			}
			return nil
		}
		s.file(p, rel, d.Name())
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Files the overlay adds to the chapter.
	for abs, repl := range replace {
		if _, err := os.Lstat(abs); err == nil || repl == "" {
			continue
		}
		if rel, err := filepath.Rel(root, abs); err == nil && strings.HasPrefix(filepath.ToSlash(rel), chapterDir+"/") {
			s.file(abs, filepath.ToSlash(rel), filepath.Base(abs))
		}
	}
	s.sentinels = map[string]map[string]bool{}
	for _, pf := range s.parsed {
		s.noteSentinels(pf)
	}
	for _, pf := range s.parsed {
		s.check(pf)
	}
	var hits []Hit
	for _, h := range s.hits {
		if !allowed[h.Rule] {
			hits = append(hits, h)
		}
	}
	return hits, nil
}

type screener struct {
	fset       *token.FileSet
	module     string
	chapterDir string
	spec       rubric.Chapter
	hits       []Hit
	replace    map[string]string // the build's overlay
	parsed     []parsedFile
	sentinels  map[string]map[string]bool // package directory → vars = errors.New("…")
}

type parsedFile struct {
	rel string // relative to the module root, slash-separated
	f   *ast.File
}

func (s *screener) hit(rule, what, file string, line int, exercises []string) {
	s.hits = append(s.hits, Hit{Rule: rule, What: what, File: file, Line: line, Exercises: exercises})
}

// nonGoSources are the files that bring code the go command would compile
// or link besides Go: cgo's C and C++, assembly, prebuilt objects.
var nonGoSources = []string{".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".m", ".s", ".S", ".sx", ".f", ".F", ".for", ".f90", ".syso", ".swig", ".swigcxx"}

func (s *screener) file(p, rel, name string) {
	if repl, ok := s.replace[p]; ok {
		if repl == "" {
			return // the build leaves it out
		}
		p = repl
	}
	if slices.Contains(nonGoSources, filepath.Ext(name)) {
		s.hit(ruleCgo, "non-Go source "+name, rel, 1, nil)
		return
	}
	if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
		return
	}
	if !builds(p) {
		return // excluded by its build constraints (a //go:build ignore generator, another system's file)
	}
	f, err := parser.ParseFile(s.fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return // the build reports it, with the compiler's words
	}
	s.parsed = append(s.parsed, parsedFile{rel: rel, f: f})
}

// buildContext is the build the screened files are for: this system, with
// cgo and the race detector, as tools/cmd/grade builds the subject.
var buildContext = func() build.Context {
	c := build.Default
	c.CgoEnabled = true
	c.BuildTags = append(c.BuildTags, "race")
	return c
}()

// builds reports whether the file at p is part of the build: its build
// constraints and its name's _GOOS/_GOARCH suffix allow it.
func builds(p string) bool {
	ok, err := buildContext.MatchFile(filepath.Dir(p), filepath.Base(p))
	return err != nil || ok // a file that cannot be read is the build's to report
}

// noteSentinels records the package-level vars of a file that are plain
// errors.New("…") values: fmt.Errorf may wrap them at start-up, since their
// Error method is the standard library's.
func (s *screener) noteSentinels(pf parsedFile) {
	dir := path.Dir(pf.rel)
	if s.sentinels[dir] == nil {
		s.sentinels[dir] = map[string]bool{}
	}
	for _, decl := range pf.f.Decls {
		d, ok := decl.(*ast.GenDecl)
		if !ok || d.Tok != token.VAR {
			continue
		}
		for _, spec := range d.Specs {
			vs := spec.(*ast.ValueSpec)
			if vs.Type != nil || len(vs.Names) != len(vs.Values) {
				continue
			}
			for i, v := range vs.Values {
				if c, ok := v.(*ast.CallExpr); ok && callName(c.Fun) == "errors.New" && len(c.Args) == 1 {
					if _, lit := c.Args[0].(*ast.BasicLit); lit {
						s.sentinels[dir][vs.Names[i].Name] = true
					}
				}
			}
		}
	}
}

// check screens one parsed file.
func (s *screener) check(pf parsedFile) {
	f, rel := pf.f, pf.rel
	line := func(n ast.Node) int { return s.fset.Position(n.Pos()).Line }

	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//go:linkname") {
				s.hit(ruleLinkname, "//go:linkname", rel, line(c), nil)
			}
			if strings.HasPrefix(c.Text, "//go:cgo_") {
				s.hit(ruleCgo, strings.Fields(c.Text)[0], rel, line(c), nil)
			}
		}
	}
	imports := map[string]string{} // local name → import path
	for _, im := range f.Imports {
		ip, _ := strconv.Unquote(im.Path.Value)
		local := path.Base(ip)
		if ip == "golang.org/x/sys/unix" {
			local = "unix"
		}
		if im.Name != nil {
			local = im.Name.Name
		}
		imports[local] = ip
		switch {
		case ip == "unsafe":
			s.hit(ruleUnsafe, `import "unsafe"`, rel, line(im), nil)
		case ip == "C":
			s.hit(ruleCgo, `import "C"`, rel, line(im), nil)
		case ip == "testing" || strings.HasPrefix(ip, "testing/"):
			s.hit(ruleArgs, fmt.Sprintf("import %q in a non-test file", ip), rel, line(im), nil)
		case s.courseImport(ip):
			s.hit(ruleImport, fmt.Sprintf("import %q", ip), rel, line(im), nil)
		}
		if local == "." {
			for _, fb := range s.spec.Screen.Forbid {
				if fb.Package() == ip {
					s.hit(ruleForbid, fmt.Sprintf("dot import of %q", ip), rel, line(im), fb.Exercises)
				}
			}
		}
	}
	// ref names a package-level identifier the way the rules do:
	// "os.Exit", "golang.org/x/sys/unix.Exit".
	ref := func(sel *ast.SelectorExpr) (string, string) {
		id, ok := sel.X.(*ast.Ident)
		if !ok {
			return "", ""
		}
		ip, ok := imports[id.Name]
		if !ok {
			return "", ""
		}
		short := path.Base(ip) + "." + sel.Sel.Name
		if ip == "golang.org/x/sys/unix" {
			short = "unix." + sel.Sel.Name
		}
		return ip + "." + sel.Sel.Name, short
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.Name == "init" {
				s.hit(ruleInit, "func init", rel, line(d), nil)
			}
		case *ast.GenDecl:
			if d.Tok == token.VAR {
				s.startup(d, rel, imports)
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			full, short := ref(n)
			if full == "" {
				return true
			}
			if exitCalls[full] {
				s.hit(ruleExit, short, rel, line(n), nil)
			}
			if argsRefs[full] {
				s.hit(ruleArgs, short, rel, line(n), nil)
			}
			for _, fb := range s.spec.Screen.Forbid {
				if fb.Ref == full {
					why := ""
					if fb.Why != "" {
						why = ": " + fb.Why
					}
					s.hit(ruleForbid, short+why, rel, line(n), fb.Exercises)
				}
			}
		case *ast.BasicLit:
			if n.Kind == token.STRING {
				if v, err := strconv.Unquote(n.Value); err == nil && strings.Contains(v, "/proc") {
					s.hit(ruleProc, fmt.Sprintf("the path %q", v), rel, line(n), nil)
				}
			}
		}
		return true
	})
}

// screenCost applies hits to a chapter's exercises: a hit without exercises
// costs them all. It returns the message per exercise id (the first hit).
//
// Under a judge (judged), the rules that guarded the secret of an in-process
// harness (init, startup, exit, args, proc) cost nothing: what they catch
// runs in the subject, where it can only lose points, and screening names it
// to teach. unsafe and linkname still cost (they reach past the race and
// leak checks the subject runs), and so do cgo (a C compiler reading the
// student's files as the grader's user), import and forbid (code that hands
// the exercise to the course's own or another's solution).
func screenCost(hits []Hit, ch *ChapterResult, judged bool) {
	for i := range ch.Exercises {
		ex := &ch.Exercises[i]
		for _, h := range hits {
			if judged && teachOnly[h.Rule] {
				continue
			}
			if h.Exercises == nil || slices.Contains(h.Exercises, ex.ID) {
				ex.Cause, ex.Message = CauseIntegrity, h.String()
				break
			}
		}
	}
}
