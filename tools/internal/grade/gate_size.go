package grade

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"unicode/utf8"
)

// The build of untrusted code is bounded by what one value may weigh. One
// line, `var bloat = [1<<28]byte{1<<28 - 1: 1}`, costs the compiler 575 MB
// and leaves a 256 MiB entry in the grader's Go build cache, which later
// builds and other students' gradings share (cheater5 B); nothing else in the
// tree is large, and the gate's own bounds on the source (gate_bounds.go) do
// not see it, since the line is 40 bytes. Static data is where the cost is:
// a composite literal of a large array or struct, or a slice literal with a
// large index, goes whole into the object file. So the gate refuses every
// type the tree names, and every composite literal it writes, that is larger
// than maxValueSize: the course's servers keep their buffers in slices made
// at run time, and its largest fixed-size value is a few KiB.

// A constant string is static data as well, and doubling makes it large in
// a few lines (const s1 = s0 + s0; …; s22 is 64 MiB: a 69 MB binary, 674 MB
// of compiler). go/constant keeps a sum of strings unflattened, and so does
// the gate: it adds up lengths from the literals and never asks for the
// value (constant.StringVal would build it, in the grader's memory).

// ruleSize is the gate's rule for a value too large to build.
const ruleSize = "size"

// maxValueSize is the largest array, struct or literal the tree may name:
// 1 MiB, a hundred times the largest in the reference solutions.
const maxValueSize = 1 << 20

// gateSizes are the sizes of the machine the grader builds for; a 64-bit
// layout is the largest the course supports.
var gateSizes = types.SizesFor("gc", "amd64")

// sizes refuses, in sf, every type expression and composite literal whose
// value is larger than maxValueSize.
func (g *gate) sizes(sf *srcFile, info *types.Info) {
	line := func(n ast.Node) int { return g.fset.PositionFor(n.Pos(), false).Line }
	refuse := func(n ast.Node, what string, size int64) {
		g.refuse(ruleSize, sf.rel, line(n), fmt.Sprintf("chapter %s's code needs no value of %s: %s goes whole "+
			"into the compiled program and the grader's build cache (the limit is %s); build a value "+
			"this large at run time (make([]byte, n), strings.Repeat)", g.chapter.ID, sizeText(size), what, sizeText(maxValueSize)))
	}
	ast.Inspect(sf.f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ValueSpec:
			for _, name := range n.Names {
				size := g.constLen(info, info.Defs[name], 0)
				if size > maxValueSize {
					refuse(name, strWhat(size), size)
					return false // its expression would only repeat the refusal
				}
				g.addStatic(sf, name, size)
			}
		case *ast.BinaryExpr:
			if size := g.strLen(info, n, 0); size > maxValueSize {
				refuse(n, strWhat(size), size)
				return false
			}
		case *ast.ArrayType, *ast.StructType, *ast.IndexExpr, *ast.IndexListExpr:
			tv, ok := info.Types[n.(ast.Expr)]
			if !ok || !tv.IsType() {
				return true
			}
			if size := sizeOf(tv.Type); size > maxValueSize {
				refuse(n, "a fixed-size type this large", size)
				return false // its parts would only repeat the refusal
			}
		case *ast.CompositeLit:
			tv, ok := info.Types[n]
			if !ok {
				return true
			}
			if s, ok := tv.Type.Underlying().(*types.Slice); ok {
				if size := sliceLitLen(n, info) * max(sizeOf(s.Elem()), 1); size > maxValueSize || size < 0 {
					refuse(n, "a slice literal this long", size)
					return false
				}
			} else if size := sizeOf(tv.Type); size > maxValueSize {
				refuse(n, "a literal this large", size)
				return false
			}
			g.addStatic(sf, n, literalSize(n, info))
		}
		return true
	})
}

// strLen is the length of e if it is a constant string (0 otherwise), added
// up from its literals and constants without building it, or unmeasured
// where its form is one strLen does not know. Constants of the
// tree's own are measured from their declarations, once each (strLens);
// another package's (the standard library's, the course's) are short and
// read as they are.
func (g *gate) strLen(info *types.Info, e ast.Expr, depth int) int64 {
	tv, ok := info.Types[e]
	if !ok || tv.Value == nil || tv.Value.Kind() != constant.String {
		if id, ok := ast.Unparen(e).(*ast.Ident); !ok || info.Uses[id] == nil {
			return 0
		}
	}
	if depth > 10000 {
		return unmeasured // nothing honest nests so deep
	}
	switch e := ast.Unparen(e).(type) {
	case *ast.BasicLit:
		return int64(len(e.Value))
	case *ast.BinaryExpr:
		return min(g.strLen(info, e.X, depth+1)+g.strLen(info, e.Y, depth+1), unmeasured)
	case *ast.CallExpr:
		if fun, ok := info.Types[e.Fun]; ok && fun.IsType() && len(e.Args) == 1 {
			if arg := info.Types[e.Args[0]]; arg.Value != nil && arg.Value.Kind() != constant.String {
				// T(65), string('A'): one rune's encoding (an invalid one
				// is U+FFFD's, 3 bytes).
				if r, ok := constant.Int64Val(constant.ToInt(arg.Value)); ok && r >= 0 && r <= utf8.MaxRune {
					if n := utf8.RuneLen(rune(r)); n > 0 {
						return int64(n)
					}
				}
				return utf8.UTFMax
			}
			return g.strLen(info, e.Args[0], depth+1) // T("…")
		}
		if id, ok := ast.Unparen(e.Fun).(*ast.Ident); ok && len(e.Args) > 0 {
			if b, ok := info.Uses[id].(*types.Builtin); ok && (b.Name() == "min" || b.Name() == "max") {
				n := int64(0) // min or max of strings: one of them
				for _, a := range e.Args {
					n = max(n, g.strLen(info, a, depth+1))
				}
				return n
			}
		}
	case *ast.Ident:
		return g.constLen(info, info.Uses[e], depth)
	case *ast.SelectorExpr:
		return g.constLen(info, info.Uses[e.Sel], depth)
	}
	// A constant string of a form not measured above counts as too long to
	// build: once string('A') counted as 0 bytes, and doubling it made 64
	// MiB the gate let through (cheater6 C). The forms are few; a new one
	// is refused until it is measured here.
	return unmeasured
}

// unmeasured is strLen's length for a constant string it cannot measure:
// more than any limit.
const unmeasured = 1 << 62

// strWhat names, for the refusal, a constant string of length n.
func strWhat(n int64) string {
	if n >= unmeasured {
		return "a constant string written in a form the gate cannot measure (a literal, +, a conversion, min or max it can)"
	}
	return "a constant string this long"
}

// constLen is the length of the string constant obj.
func (g *gate) constLen(info *types.Info, obj types.Object, depth int) int64 {
	c, ok := obj.(*types.Const)
	if !ok || c.Val().Kind() != constant.String {
		return 0
	}
	if n, ok := g.strLens[c]; ok {
		return n
	}
	if c.Pkg() == nil || !g.ownPath(c.Pkg().Path()) {
		return int64(len(constant.StringVal(c.Val())))
	}
	if g.strLens == nil {
		g.strLens = map[types.Object]int64{}
	}
	g.strLens[c] = 0 // a cycle (a tree that does not type-check) adds nothing
	n := int64(0)
	if init := g.constInits()[c.Pos()]; init != nil {
		n = g.strLen(info, init, depth+1)
	}
	g.strLens[c] = n
	return n
}

// constInits maps the position of each constant the tree declares to the
// expression it is declared with (the one repeated, where a spec of a group
// has none).
func (g *gate) constInits() map[token.Pos]ast.Expr {
	if g.inits != nil {
		return g.inits
	}
	g.inits = map[token.Pos]ast.Expr{}
	for _, sf := range g.files {
		for _, d := range sf.f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			var last []ast.Expr
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if len(vs.Values) > 0 {
					last = vs.Values
				}
				for i, name := range vs.Names {
					if i < len(last) {
						g.inits[name.Pos()] = last[i]
					}
				}
			}
		}
	}
	return g.inits
}

// sizeOf is t's size in bytes, or -1 past what an int64 holds (or where
// go/types cannot say: a type that did not check).
func sizeOf(t types.Type) (size int64) {
	defer func() {
		if recover() != nil {
			size = -1
		}
	}()
	if size = gateSizes.Sizeof(t); size < 0 {
		return 1 << 62
	}
	return size
}

// sliceLitLen is the length of a slice literal: one past its largest index.
func sliceLitLen(lit *ast.CompositeLit, info *types.Info) int64 {
	var n, next int64
	for _, e := range lit.Elts {
		if kv, ok := e.(*ast.KeyValueExpr); ok {
			if v := info.Types[kv.Key].Value; v != nil {
				if i, ok := constant.Int64Val(constant.ToInt(v)); ok {
					next = i
				} else {
					return 1 << 62
				}
			}
		}
		next++
		n = max(n, next)
	}
	return n
}

// sizeText is "256 MiB" for 1<<28.
func sizeText(n int64) string {
	switch {
	case n < 0 || n >= 1<<40:
		return "more than a TiB"
	case n >= 1<<30:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}
