package grade

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/types"
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
			"into the compiled program and the grader's build cache (the limit is %s); make a slice of the "+
			"size you need at run time (make([]byte, n))", g.chapter.ID, sizeText(size), what, sizeText(maxValueSize)))
	}
	ast.Inspect(sf.f, func(n ast.Node) bool {
		switch n := n.(type) {
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
		}
		return true
	})
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
