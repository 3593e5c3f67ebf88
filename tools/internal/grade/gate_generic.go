package grade

import (
	"fmt"
	"go/ast"
	"go/types"
	"path"
)

// instance checks the type arguments of a generic function or type named at
// id, inferred or written: a restricted package's type the chapter may not
// hold is refused there, as its value would be (valueOfRefusedType). A
// generic body can keep such a value to itself: with
// func ctl[T interface{ Control(func(uintptr)) error }](c interface{ SyscallConn() (T, error) }) uintptr,
// ctl(conn) infers T = syscall.RawConn, calls its Control, and hands out
// only a uintptr, so no call's result shows the type (cheater5, I).
func (g *gate) instance(sf *srcFile, line int, info *types.Info, id *ast.Ident, done map[string]bool) {
	inst, ok := info.Instances[id]
	if !ok || inst.TypeArgs == nil || sf.test {
		return
	}
	for i := range inst.TypeArgs.Len() {
		g.refusedIn(sf, line, inst.TypeArgs.At(i), done, map[types.Type]bool{})
	}
}

// refusedIn refuses the restricted named types t is made of (itself, its
// elements, its type arguments, its function's parameters and results)
// that the chapter may not hold.
func (g *gate) refusedIn(sf *srcFile, line int, t types.Type, done map[string]bool, seen map[types.Type]bool) {
	if t == nil || seen[t] {
		return
	}
	seen[t] = true
	switch t := types.Unalias(t).(type) {
	case *types.Named:
		if obj := t.Obj(); obj.Pkg() != nil {
			ip, name := obj.Pkg().Path(), obj.Name()
			if why, ok := restrictedWhy(ip); ok && !g.typeAllowed(ip, name) && !done[ip+"."+name] {
				done[ip+"."+name] = true
				g.refuse(ruleImport, sf.rel, line, fmt.Sprintf("chapter %s's code needs no %s.%s: a generic function or type is instantiated with it here, and %s",
					g.chapter.ID, path.Base(ip), name, why))
			}
		}
		if args := t.TypeArgs(); args != nil {
			for i := range args.Len() {
				g.refusedIn(sf, line, args.At(i), done, seen)
			}
		}
	case *types.Pointer:
		g.refusedIn(sf, line, t.Elem(), done, seen)
	case *types.Slice:
		g.refusedIn(sf, line, t.Elem(), done, seen)
	case *types.Array:
		g.refusedIn(sf, line, t.Elem(), done, seen)
	case *types.Chan:
		g.refusedIn(sf, line, t.Elem(), done, seen)
	case *types.Map:
		g.refusedIn(sf, line, t.Key(), done, seen)
		g.refusedIn(sf, line, t.Elem(), done, seen)
	case *types.Signature:
		for _, tup := range []*types.Tuple{t.Params(), t.Results()} {
			for i := range tup.Len() {
				g.refusedIn(sf, line, tup.At(i).Type(), done, seen)
			}
		}
	case *types.Struct:
		for i := range t.NumFields() {
			g.refusedIn(sf, line, t.Field(i).Type(), done, seen)
		}
	}
}
