package grade

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strconv"
	"strings"
)

// Screening names, to teach, what in the student's package would matter if
// the checks ran in its process: start-up code, exits, the command line,
// /proc. Under the judge none of it can forge a grade, so it costs nothing.
// What could (cgo, assembly, linkname, unsafe, reflect, a package or
// identifier the chapter does not teach) is the gate's (gate.go), which
// refuses it; screening rides on the gate's resolved names. Each rule has a
// name an instructor can pass to -allow, and a chapter's rubric entry can
// allow rules (one source of truth: tools/internal/rubric/rubric.json).
const (
	ruleInit     = "init"     // func init: runs before any check
	ruleStartup  = "startup"  // package-level initialisers that call the student's own code: likewise
	ruleExit     = "exit"     // os.Exit, syscall.Exit, unix.Exit: end the process mid-test
	ruleLinkname = "linkname" // the gate: //go:linkname and every other directive that matters
	ruleUnsafe   = "unsafe"   // the gate: import "unsafe"
	ruleCgo      = "cgo"      // the gate: import "C", C/C++/assembly/object files in the tree
	ruleImport   = "import"   // the gate: a package or identifier outside the chapter's allow-list
	ruleArgs     = "args"     // os.Args, the flag package's command line: the test binary's flags
	ruleProc     = "proc"     // string literals naming /proc: the process's own memory, environment, descriptors
	ruleForbid   = "forbid"   // the gate: a given function the rubric forbids in an exercise (ch01: the tools/given/wire codec)
	// rulePractice (practice.go): a TODO's "must" only the source shows; costs its exercise, cause failed
)

// teachOnly are the rules that are named but cost nothing.
var teachOnly = map[string]bool{ruleInit: true, ruleStartup: true, ruleExit: true, ruleArgs: true, ruleProc: true}

// The rule names are rubric.Rules; a test keeps the two lists equal.
var screenRules = []string{ruleInit, ruleStartup, ruleExit, ruleLinkname, ruleUnsafe, ruleCgo, ruleImport, ruleArgs, ruleProc, ruleForbid, rulePractice, ruleSize}

// exitCalls end the process without a word from the testing package.
var exitCalls = map[string]bool{
	"os.Exit": true, "syscall.Exit": true, "golang.org/x/sys/unix.Exit": true,
}

// argsRefs are how code reads the test binary's command line.
var argsRefs = map[string]bool{
	"os.Args": true, "flag.CommandLine": true, "flag.Lookup": true, "flag.Parse": true, "flag.Parsed": true,
	"flag.Args": true, "flag.Arg": true, "flag.NArg": true, "flag.NFlag": true, "flag.Visit": true, "flag.VisitAll": true,
	"flag.Set": true,
}

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
	if h.Rule == rulePractice {
		return fmt.Sprintf("%s:%d: %s (a rule of the exercise's TODO that no check of its behaviour can see; see docs/grading.md#practices)", h.File, h.Line, h.What)
	}
	if h.gate && h.Rule == ruleForbid {
		return fmt.Sprintf("%s:%d: %s (%s)", h.File, h.Line, h.What, forbidTeach)
	}
	if h.gate {
		return fmt.Sprintf("%s:%d: %s (%s)", h.File, h.Line, h.What, gateTeach)
	}
	return fmt.Sprintf("%s at %s:%d (screening rule %q; see docs/grading.md)", h.What, h.File, h.Line, h.Rule)
}

func (g *gate) note(rule, what string, sf *srcFile, line int) {
	g.hits = append(g.hits, Hit{Rule: rule, What: what, File: sf.rel, Line: line})
}

// teaches reports whether screening reads a file: one the grader's build
// links into the tests, not a program's under cmd/ (where os.Exit and
// flag.Parse are what they should be).
func (g *gate) teaches(sf *srcFile) bool {
	cmd := g.chapterDir + "/cmd"
	return sf.host && sf.dir != cmd && !strings.HasPrefix(sf.dir, cmd+"/")
}

// startup names the code of a file that runs before any check: func init,
// and package-level initialisers that call a function or method of the
// student's own (constructors of the standard library's are what they
// look like).
func (g *gate) startup(sf *srcFile, info *types.Info) {
	for _, decl := range sf.f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.Name == "init" {
				g.note(ruleInit, "func init", sf, g.fset.PositionFor(d.Pos(), false).Line)
			}
		case *ast.GenDecl:
			if d.Tok != token.VAR {
				continue
			}
			ast.Inspect(d, func(n ast.Node) bool {
				if _, ok := n.(*ast.FuncLit); ok {
					return false // a value, not run at start-up
				}
				if c, ok := n.(*ast.CallExpr); ok && g.callsOwn(c, info) {
					g.note(ruleStartup, "a package-level initialiser calls the package's own code", sf, g.fset.PositionFor(c.Pos(), false).Line)
				}
				return true
			})
		}
	}
}

// callsOwn reports whether a call runs code of the student's: a function
// literal, or a function or method declared in the tree.
func (g *gate) callsOwn(c *ast.CallExpr, info *types.Info) bool {
	fun := ast.Unparen(c.Fun)
	if _, ok := fun.(*ast.FuncLit); ok {
		return true
	}
	var id *ast.Ident
	switch f := fun.(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		id = f.Sel
	case *ast.IndexExpr: // a generic function, instantiated
		return g.callsOwn(&ast.CallExpr{Fun: f.X}, info)
	}
	fn, ok := info.Uses[id].(*types.Func)
	return ok && fn.Pkg() != nil && g.ownPath(fn.Pkg().Path())
}

// noteRef names exits and reads of the command line; ref is as written
// ("os.Exit", "o.Exit").
func (g *gate) noteRef(sf *srcFile, line int, ip, ref string) {
	_, name, _ := strings.Cut(ref, ".")
	switch {
	case exitCalls[ip+"."+name]:
		g.note(ruleExit, ref, sf, line)
	case argsRefs[ip+"."+name]:
		g.note(ruleArgs, ref, sf, line)
	}
}

// noteProc names string literals that name /proc.
func (g *gate) noteProc(sf *srcFile, line int, lit *ast.BasicLit) {
	if lit.Kind != token.STRING {
		return
	}
	if v, err := strconv.Unquote(lit.Value); err == nil && strings.Contains(v, "/proc") {
		g.note(ruleProc, fmt.Sprintf("the path %q", v), sf, line)
	}
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
		if h.Rule != rulePractice { // a practice is the exercise's message, not the tree's integrity
			lines = append(lines, h.String())
		}
		for i := range ch.Exercises {
			ex := &ch.Exercises[i]
			if ex.Cause != CauseIntegrity && (h.Exercises == nil || slices.Contains(h.Exercises, ex.ID)) {
				ex.Cause, ex.Message = CauseIntegrity, h.String()
				if h.Rule == rulePractice {
					ex.Cause = CauseFailed
				}
			}
		}
	}
	return lines
}
