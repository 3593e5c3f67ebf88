package grade

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
)

// The practice "splitlock": a map tested under a mutex in one section and
// changed under the same mutex in a later one, without testing it again
// there. Between the two the mutex is free, so another goroutine can make
// the same test, both see the name free (say), and both claim it: a
// check-then-act race. The TODOs say "under s.mu, one test and one change"
// (chapter 02's join). A test cannot force the window, which holds no call
// (nanoseconds, no hook); the source shows it plainly. A later section that
// reads the map again before changing it (double-checked) is left alone.
//
// Only sections in one statement list are paired, each opened by X.Lock()
// (or RLock) and closed by X.Unlock() (or RUnlock) as statements of that
// list, X the same expression; a section closed by a defer runs to the
// function's end, so it is one section.

// lockSection is one X.Lock() … X.Unlock() stretch of a statement list.
type lockSection struct {
	reads  map[string]bool // maps read (indexed, len, range)
	writes []mapWrite      // maps changed (m[k] = v, delete(m, k))
}

type mapWrite struct {
	m    string
	node ast.Node
}

// splitLocks looks for the practice in one declaration.
func (g *gate) splitLocks(fd *ast.FuncDecl, info *types.Info, at func(ast.Node, string)) {
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		b, ok := n.(*ast.BlockStmt)
		if !ok {
			return true
		}
		open := map[string]*lockSection{}
		done := map[string][]*lockSection{}
		lockedAt := map[string]token.Pos{}
		for _, st := range b.List {
			if mu, locks, ok := lockStmt(st, info); ok {
				if locks {
					open[mu] = &lockSection{reads: map[string]bool{}}
					lockedAt[mu] = st.Pos()
					continue
				}
				sec := open[mu]
				if sec == nil {
					continue
				}
				delete(open, mu)
				for _, w := range sec.writes {
					if sec.reads[w.m] {
						continue // tested again in this section
					}
					for _, prev := range done[mu] {
						if prev.reads[w.m] {
							at(w.node, fmt.Sprintf("sent: %s tested under %s in one locked section and changed in "+
								"a later one; expected: the test and the change under one %s.Lock (or the test "+
								"made again before the change); got: %s unlocked in between. Likely cause: "+
								"check-then-act: while %s is free another goroutine makes the same test, and both "+
								"act on it (two logins both get a name)", w.m, mu, mu, mu, mu))
							break
						}
					}
				}
				done[mu] = append(done[mu], sec)
				continue
			}
			for _, sec := range open {
				sec.collect(st, info)
			}
		}
		return true
	})
}

// lockStmt reports whether st is X.Lock()/X.RLock() (locks) or
// X.Unlock()/X.RUnlock() on a sync.Mutex or sync.RWMutex, and X.
func lockStmt(st ast.Stmt, info *types.Info) (mu string, locks, ok bool) {
	es, isExpr := st.(*ast.ExprStmt)
	if !isExpr {
		return "", false, false
	}
	call, isCall := ast.Unparen(es.X).(*ast.CallExpr)
	if !isCall {
		return "", false, false
	}
	sel, isSel := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !isSel {
		return "", false, false
	}
	s := info.Selections[sel]
	if s == nil {
		return "", false, false
	}
	fn, isFn := s.Obj().(*types.Func)
	if !isFn {
		return "", false, false
	}
	switch fn.FullName() {
	case "(*sync.Mutex).Lock", "(*sync.RWMutex).Lock", "(*sync.RWMutex).RLock":
		return types.ExprString(sel.X), true, true
	case "(*sync.Mutex).Unlock", "(*sync.RWMutex).Unlock", "(*sync.RWMutex).RUnlock":
		return types.ExprString(sel.X), false, true
	}
	return "", false, false
}

// collect records the maps st reads and changes.
func (sec *lockSection) collect(st ast.Stmt, info *types.Info) {
	isMap := func(e ast.Expr) bool {
		tv, ok := info.Types[e]
		if !ok {
			return false
		}
		_, m := tv.Type.Underlying().(*types.Map)
		return m
	}
	lhs := map[ast.Expr]bool{}
	ast.Inspect(st, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false // runs later, maybe not under the lock
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				if ix, ok := ast.Unparen(l).(*ast.IndexExpr); ok && isMap(ix.X) {
					lhs[ix] = true
					sec.writes = append(sec.writes, mapWrite{types.ExprString(ix.X), n})
				}
			}
		case *ast.IndexExpr:
			if !lhs[n] && isMap(n.X) {
				sec.reads[types.ExprString(n.X)] = true
			}
		case *ast.RangeStmt:
			if isMap(n.X) {
				sec.reads[types.ExprString(n.X)] = true
			}
		case *ast.CallExpr:
			if id, ok := ast.Unparen(n.Fun).(*ast.Ident); ok && len(n.Args) > 0 && isMap(n.Args[0]) {
				if _, builtin := info.Uses[id].(*types.Builtin); builtin {
					switch id.Name {
					case "len":
						sec.reads[types.ExprString(n.Args[0])] = true
					case "delete":
						sec.writes = append(sec.writes, mapWrite{types.ExprString(n.Args[0]), n})
					}
				}
			}
		}
		return true
	})
}
