package grade

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strings"

	"serverlab/tests/testkit"
)

// Practices: a few "musts" of the exercises' TODOs that no behaviour the
// judge can see tells apart, checked in the student's source instead. Each
// is a rule the course teaches word for word, and each is one a vet-like
// look at the code decides without guessing:
//
//   - waitgroup: a goroutine that counts itself in a sync.WaitGroup (its
//     first statement is wg.Add). The Add then races the Wait it is for:
//     Close may return before the goroutine is counted. The TODOs say
//     "counted in s.wg before that goroutine starts"; go vet's waitgroup
//     analyzer reports the same thing. A test cannot see it: the goroutine
//     is counted microseconds later, long before any Close a check sends.
//   - constant-time: a stored user's password (users.User.Password)
//     compared with == or !=. The TODOs say "compared in constant time"
//     (crypto/subtle.ConstantTimeCompare): == stops at the first byte that
//     differs, and how long a refusal takes tells an attacker how much of
//     the guess was right. The timing is nanoseconds, far under what a check
//     across a network can measure.
//   - splitlock: a map tested under a mutex in one locked section and
//     changed in a later one (practice_locks.go). The TODOs say "under s.mu,
//     one test and one change"; the window between the sections holds no
//     call, so no check can make two goroutines meet in it.
//
// A practice costs the exercise whose TODO the declaration holding it
// belongs to (owners), cause failed, with a message that says what
// was found, what was expected and why. In a helper the course does not
// stub, it costs the exercises of the stubs that call the helper; in a
// helper none of them calls, nothing.
const rulePractice = "practice"

// owners maps each declaration chapter id's starter stubs ("Server.Serve",
// "NewPool") to the exercises whose TODO(ex N.K) it holds. The list is
// derived from chapters/ (testkit.StubOwners, kept current by make chapters
// and TestStarterStubsAreCurrent), not kept here by hand: the student's copy
// of a chapter may have lost its TODOs, the course's list has not.
func owners(id string) map[string][]string { return testkit.StubOwners(id) }

// declKey names a function declaration as owners does:
// "Recv.Name" for a method (pointer and type parameters dropped), "Name"
// for a function.
func declKey(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := ast.Unparen(fd.Recv.List[0].Type)
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// funcKey names a function or method object the same way.
func funcKey(fn *types.Func) string {
	if recv := fn.Signature().Recv(); recv != nil {
		if n := namedOf(recv.Type()); n != nil {
			return n.Obj().Name() + "." + fn.Name()
		}
	}
	return fn.Name()
}

// practiceFinding is one practice broken at one place.
type practiceFinding struct {
	sf   *srcFile
	decl string // the declaration holding it
	line int
	text string // sent/expected/got and the likely cause, without the exercise
}

// practices checks the chapter package's files (those the grader compiles,
// tests aside) once they are type-checked together.
func (g *gate) practices(files []*srcFile, info *types.Info) {
	var found []practiceFinding
	decls := map[string]*ast.FuncDecl{}
	for _, sf := range files {
		if !sf.host || sf.test || sf.dir != g.chapterDir {
			continue
		}
		for _, d := range sf.f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			decls[declKey(fd)] = fd
			found = append(found, g.practicesIn(sf, fd, info)...)
		}
	}
	own := owners(g.chapter.ID)
	for _, f := range found {
		exs := own[f.decl]
		if exs == nil {
			exs = callersOf(f.decl, decls, own, info)
		}
		if len(exs) == 0 {
			continue // code no exercise runs: no check of its would have seen it either
		}
		what := fmt.Sprintf("exercise %s: %s", strings.Join(exs, ", "), f.text)
		g.hits = append(g.hits, Hit{Rule: rulePractice, What: what, File: f.sf.rel, Line: f.line, Exercises: exs})
	}
}

// callersOf returns the exercises of the stubbed declarations that call the
// helper named key.
func callersOf(key string, decls map[string]*ast.FuncDecl, own map[string][]string, info *types.Info) []string {
	var exs []string
	for name, fd := range decls {
		if own[name] == nil {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var id *ast.Ident
			switch f := ast.Unparen(c.Fun).(type) {
			case *ast.Ident:
				id = f
			case *ast.SelectorExpr:
				id = f.Sel
			case *ast.IndexExpr:
				if x, ok := f.X.(*ast.Ident); ok {
					id = x
				}
			}
			if fn, ok := info.Uses[id].(*types.Func); ok && funcKey(fn.Origin()) == key {
				for _, e := range own[name] {
					if !slices.Contains(exs, e) {
						exs = append(exs, e)
					}
				}
			}
			return true
		})
	}
	slices.Sort(exs)
	return exs
}

// practicesIn looks for the practices in one declaration.
func (g *gate) practicesIn(sf *srcFile, fd *ast.FuncDecl, info *types.Info) []practiceFinding {
	var found []practiceFinding
	at := func(n ast.Node, text string) {
		found = append(found, practiceFinding{sf: sf, decl: declKey(fd), line: g.fset.PositionFor(n.Pos(), false).Line, text: text})
	}
	g.splitLocks(fd, info, at) // practice_locks.go
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			if call := addFirst(n, info); call != nil {
				at(call, fmt.Sprintf("sent: the goroutine started here; expected: its %s before the go statement; "+
					"got: %s as the goroutine's first statement. Likely cause: the goroutine counts itself, so a "+
					"Wait that runs before it is scheduled (Close) returns without waiting for it: call Add before go, "+
					"or use WaitGroup.Go (go vet's waitgroup check reports the same line)", types.ExprString(call), types.ExprString(call)))
			}
		case *ast.BinaryExpr:
			if n.Op != token.EQL && n.Op != token.NEQ {
				return true
			}
			if isPassword(n.X, info) && !isConst(n.Y, info) || isPassword(n.Y, info) && !isConst(n.X, info) {
				at(n, fmt.Sprintf("sent: a password to check; expected: a comparison in constant time "+
					"(subtle.ConstantTimeCompare); got: %s. Likely cause: == stops at the first byte that differs, "+
					"so how long a refusal takes tells a guesser how much of the password was right", types.ExprString(n)))
			}
		}
		return true
	})
	return found
}

// addFirst returns the call of (*sync.WaitGroup).Add that is the first
// statement of the function literal a go statement starts (the case go
// vet's waitgroup analyzer reports), or nil.
func addFirst(gs *ast.GoStmt, info *types.Info) *ast.CallExpr {
	lit, ok := ast.Unparen(gs.Call.Fun).(*ast.FuncLit)
	if !ok || len(lit.Body.List) == 0 {
		return nil
	}
	es, ok := lit.Body.List[0].(*ast.ExprStmt)
	if !ok {
		return nil
	}
	call, ok := ast.Unparen(es.X).(*ast.CallExpr)
	if !ok {
		return nil
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return nil
	}
	if s := info.Selections[sel]; s != nil {
		if fn, ok := s.Obj().(*types.Func); ok && fn.FullName() == "(*sync.WaitGroup).Add" {
			return call
		}
	}
	return nil
}

// isPassword reports whether e is the Password field of the course's
// users.User (a stored user's password, or one being registered).
func isPassword(e ast.Expr, info *types.Info) bool {
	sel, ok := ast.Unparen(e).(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Password" {
		return false
	}
	s := info.Selections[sel]
	if s == nil || s.Kind() != types.FieldVal {
		return false
	}
	pkg, typ := ownerOf(s)
	return strings.HasSuffix(pkg, "/tools/given/users") && typ == "User"
}

// isConst reports whether e is a constant ("": a test for an empty
// password leaks nothing about a stored one).
func isConst(e ast.Expr, info *types.Info) bool {
	tv, ok := info.Types[e]
	return ok && tv.Value != nil
}

// decided reports whether an exercise lost its points before anything ran:
// the gate refused the tree, or a practice failed it. Such an exercise is
// neither built for nor run.
func decided(e ExerciseResult) bool {
	return e.Cause == CauseIntegrity || e.Cause == CauseFailed
}
