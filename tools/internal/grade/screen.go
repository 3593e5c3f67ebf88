package grade

import (
	"fmt"
	"go/ast"
	"go/token"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Screening names, to teach, what in the student's package would matter if
// the checks ran in its process: start-up code, exits, the command line,
// /proc. Under the judge none of it can forge a grade, so it costs nothing
// (see screenNotes). What could (cgo, assembly, linkname, unsafe, reflect,
// a package or identifier the chapter does not teach) is the gate's
// (gate.go), which refuses it. Each rule has a name an instructor can pass
// to -allow, and a chapter's rubric entry can allow rules (one source of
// truth: tools/internal/rubric/rubric.json).
const (
	ruleInit     = "init"     // func init: runs before the harness is ready
	ruleStartup  = "startup"  // package-level initialisers that call anything but a short list of constructors
	ruleExit     = "exit"     // os.Exit, syscall.Exit, unix.Exit: end the process mid-test
	ruleLinkname = "linkname" // the gate: //go:linkname and every other directive that matters
	ruleUnsafe   = "unsafe"   // the gate: import "unsafe"
	ruleCgo      = "cgo"      // the gate: import "C", C/C++/assembly/object files in the tree
	ruleImport   = "import"   // the gate: a package or identifier outside the chapter's allow-list
	ruleArgs     = "args"     // os.Args, the flag package's command line: the test binary's flags
	ruleProc     = "proc"     // string literals naming /proc: the process's own memory, environment, descriptors
	ruleForbid   = "forbid"   // the gate: a given function the rubric forbids in an exercise (ch01: the tools/given/wire codec)
)

// teachOnly are the rules that are named but cost nothing.
var teachOnly = map[string]bool{ruleInit: true, ruleStartup: true, ruleExit: true, ruleArgs: true, ruleProc: true}

// The rule names are rubric.Rules; a test keeps the two lists equal.
var screenRules = []string{ruleInit, ruleStartup, ruleExit, ruleLinkname, ruleUnsafe, ruleCgo, ruleImport, ruleArgs, ruleProc, ruleForbid}

// Hit is one thing the gate or screening found.
type Hit struct {
	Rule      string
	What      string   // "os.Exit", "func init"; the gate's: why it refuses
	File      string   // relative to the module root, slash-separated
	Line      int      //
	Exercises []string // the exercises it costs; nil: the whole chapter
	gate      bool     // the gate's refusal, not a screening note
}

// String is the message an exercise loses its points with:
// "chapters/03/cmd/x/main.go:12: chapter 03's code needs no reflect: …".
func (h Hit) String() string {
	if h.gate {
		return fmt.Sprintf("%s:%d: %s (%s)", h.File, h.Line, h.What, gateTeach)
	}
	return fmt.Sprintf("%s at %s:%d (screening rule %q; see docs/grading.md)", h.What, h.File, h.Line, h.Rule)
}

// screenNotes applies the teaching rules to the files the grader's build
// links into the tests: the chapter's package and its subpackages, not
// cmd/ (programs, where os.Exit and flag.Parse are what they should be).
func (g *gate) screenNotes() {
	s := &screener{fset: g.fset, sentinels: map[string]map[string]bool{}}
	var files []*srcFile
	for _, sf := range g.files {
		if sf.host && sf.dir != g.chapterDir+"/cmd" && !strings.HasPrefix(sf.dir, g.chapterDir+"/cmd/") {
			files = append(files, sf)
			s.noteSentinels(sf)
		}
	}
	for _, sf := range files {
		s.check(sf)
	}
	g.hits = append(g.hits, s.hits...)
}

type screener struct {
	fset      *token.FileSet
	hits      []Hit
	sentinels map[string]map[string]bool // package directory → vars = errors.New("…")
}

func (s *screener) hit(rule, what, file string, line int) {
	s.hits = append(s.hits, Hit{Rule: rule, What: what, File: file, Line: line})
}

// noteSentinels records the package-level vars of a file that are plain
// errors.New("…") values: fmt.Errorf may wrap them at start-up, since their
// Error method is the standard library's.
func (s *screener) noteSentinels(sf *srcFile) {
	if s.sentinels[sf.dir] == nil {
		s.sentinels[sf.dir] = map[string]bool{}
	}
	for _, decl := range sf.f.Decls {
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
						s.sentinels[sf.dir][vs.Names[i].Name] = true
					}
				}
			}
		}
	}
}

// check screens one file.
func (s *screener) check(sf *srcFile) {
	f, rel := sf.f, sf.rel
	line := func(n ast.Node) int { return s.fset.Position(n.Pos()).Line }
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
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.Name == "init" {
				s.hit(ruleInit, "func init", rel, line(d))
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
			id, ok := n.X.(*ast.Ident)
			if !ok || imports[id.Name] == "" {
				return true
			}
			full, short := imports[id.Name]+"."+n.Sel.Name, id.Name+"."+n.Sel.Name
			if exitCalls[full] {
				s.hit(ruleExit, short, rel, line(n))
			}
			if argsRefs[full] {
				s.hit(ruleArgs, short, rel, line(n))
			}
		case *ast.BasicLit:
			if n.Kind == token.STRING {
				if v, err := strconv.Unquote(n.Value); err == nil && strings.Contains(v, "/proc") {
					s.hit(ruleProc, fmt.Sprintf("the path %q", v), rel, line(n))
				}
			}
		}
		return true
	})
}

// screenCost applies the gate's refusals to a chapter's exercises: one
// without exercises costs them all. Screening's notes cost nothing. It
// returns the report's integrity lines.
func screenCost(hits []Hit, ch *ChapterResult) []string {
	var lines []string
	for _, h := range hits {
		if teachOnly[h.Rule] {
			lines = append(lines, "note (costs nothing: it runs in the process the judge drives): "+h.String())
			continue
		}
		lines = append(lines, h.String())
		for i := range ch.Exercises {
			ex := &ch.Exercises[i]
			if ex.Cause != CauseIntegrity && (h.Exercises == nil || slices.Contains(h.Exercises, ex.ID)) {
				ex.Cause, ex.Message = CauseIntegrity, h.String()
			}
		}
	}
	return lines
}
