package grade

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strings"
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
//
// A practice costs the exercise whose TODO the declaration holding it
// belongs to (practiceOwners), cause failed, with a message that says what
// was found, what was expected and why. In a helper the course does not
// stub, it costs the exercises of the stubs that call the helper; in a
// helper none of them calls, nothing.
const rulePractice = "practice"

// practiceOwners maps, per chapter, each declaration the chapter stubs
// ("Server.Serve", "NewPool") to the exercises whose TODO(ex N.K) it holds.
// TestPracticeOwners keeps it equal to the stubs in chapters/.
var practiceOwners = map[string]string{
	"01": "OpenStore=1.3 ReadFrame=1.1 Server.Close=1.4+1.6 Server.Serve=1.4 Server.handle=1.4+1.5 Store.Register=1.3 WriteFrame=1.2",
	"02": "Server.Serve=2.1 Server.authenticate=2.1 Server.broadcast=2.2 Server.closeConns=2.6 Server.drop=2.5 Server.join=2.1 Server.login=2.1 Server.others=2.2 Server.private=2.3 Server.queryUsers=2.4 client.writeLoop=2.2 outbox.push=2.2 outbox.take=2.2 roomWaiter.wait=2.5",
	"03": "BoundedQueue.Close=3.2 BoundedQueue.Get=3.2 BoundedQueue.Put=3.2 LineReader.Next=3.1 NewPool=3.3 Parse=3.1 Server.Close=3.4 Server.Serve=3.4 Server.Stats=3.7 Server.read=3.4+3.7 Server.shutdown=3.4+3.6 Server.start=3.4 Server.submit=3.4 Server.work=3.4+3.7 clientConn.send=3.4 clientConn.writeLoop=3.4",
	"04": "RWLock.Lock=4.3 RWLock.RLock=4.3 RWLock.RUnlock=4.3 RWLock.Unlock=4.3 Server.Close=4.7 Server.Serve=4.5 Server.awaitRequest=4.5 Server.closeConn=4.7 Server.execute=4.2 Server.flush=4.5 Server.park=4.5 Server.serveBatch=4.2 Server.sync=4.6 Server.syncEvery=4.6 Server.worker=4.5 Tree.AppendPreOrder=4.1 Tree.Buy=4.1+4.4 Tree.Insert=4.1 Tree.Sell=4.1+4.4 Tree.find=4.1",
	"05": "Conn.Congested=5.5 Conn.Write=5.4 DrainFrames=5.1 DrainLines=5.2 Loop.acceptFailed=5.7 Loop.deliver=5.3 Loop.flush=5.4 Loop.limit=5.5 Loop.resume=5.5 Loop.teardown=5.8 Loop.timeout=5.6 Loop.watch=5.4 chat.Tick=5.9 chat.broadcast=5.10 chat.login=5.9 chat.private=5.11 chat.query=5.12 stock.Tick=5.17 stock.serve=5.15 stock.sync=5.17 stock.trade=5.15",
	"06": "Docroot.Open=6.2 Handler.armRead=6.7 Handler.armWrite=6.7 ReadRequest=6.1 RunCGI=6.4 ServeStatic=6.3 Server.Close=6.5 Server.Serve=6.5 Server.sffKey=6.6 Server.work=6.5 contentType=6.3 fifo.close=6.5 fifo.pop=6.5 fifo.push=6.5 jobHeap.Less=6.6 jobHeap.Pop=6.6 jobHeap.Push=6.6 newSFFQueue=6.6 sffQueue.close=6.6 sffQueue.pop=6.6 sffQueue.push=6.6",
	"07": "Server.Serve=7.1 Server.answerBadFrame=7.1 Server.authenticate=7.2 Server.commit=7.4 Server.commitLoop=7.4 Server.createChannel=7.3 Server.createUser=7.2 Server.drop=7.5 Server.endSession=7.2 Server.frameDeadline=7.6 Server.gather=7.4 Server.getChannel=7.3 Server.getChannels=7.3 Server.getChats=7.4 Server.getUser=7.2 Server.getUsers=7.2 Server.hashPassword=7.2 Server.heartbeat=7.6 Server.joinChannel=7.3 Server.keepAlive=7.6 Server.logout=7.2 Server.notifyAndFlush=7.7 Server.readDeadline=7.6 Server.readLoop=7.1 Server.shutdown=7.7 Server.verifyPassword=7.2 Server.wrapTLS=7.1 Server.writeChat=7.4 outbox.push=7.5 validName=7.2",
	"08": "Server.apply=8.2 Server.claimSession=8.4 Server.createChannelKey=8.4 Server.createUserKey=8.4 Server.history=8.3 Server.publishChat=8.1 Server.refreshSessions=8.5",
}

// owners is chapter id's practiceOwners entry as a map.
func owners(id string) map[string][]string {
	m := map[string][]string{}
	for _, f := range strings.Fields(practiceOwners[id]) {
		decl, exs, _ := strings.Cut(f, "=")
		m[decl] = strings.Split(exs, "+")
	}
	return m
}

// declKey names a function declaration as practiceOwners does:
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
