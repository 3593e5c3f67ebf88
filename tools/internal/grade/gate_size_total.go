package grade

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
)

// The size rule bounds each value at maxValueSize, but not their sum: 64
// literals of [1<<20 - 8]byte, each under the limit, made a 67 MB build
// cache entry that scored 100/100 (cheater6 C2). So the gate also adds up
// the chapter tree's static data — every composite literal not inside
// another, and every constant string it declares (a doubling chain counts
// about twice its longest, which the limit allows for) — and refuses the
// value that takes the sum past maxStaticTotal.

// maxStaticTotal is the most static data a chapter tree may write in all:
// four times what one value may weigh; the reference solutions' is a few
// KiB.
const maxStaticTotal = 4 * maxValueSize

// staticTotal is the running sum for one chapter tree.
type staticTotal struct {
	sum     int64
	litEnd  map[*srcFile]token.Pos // the end of the last literal counted, per file
	refused bool                   // the sum's refusal is made once
}

// addStatic adds size bytes of static data written at n in sf, and refuses
// n if they take the chapter's sum past maxStaticTotal. A literal inside one
// already counted is part of it.
func (g *gate) addStatic(sf *srcFile, n ast.Node, size int64) {
	st := &g.static
	if _, ok := n.(*ast.CompositeLit); ok {
		if st.litEnd == nil {
			st.litEnd = map[*srcFile]token.Pos{}
		}
		if n.Pos() < st.litEnd[sf] {
			return
		}
		st.litEnd[sf] = n.End()
	}
	if size <= 0 || st.refused {
		return
	}
	st.sum = min(st.sum+size, unmeasured)
	if st.sum <= maxStaticTotal {
		return
	}
	st.refused = true
	g.refuse(ruleSize, sf.rel, g.fset.PositionFor(n.Pos(), false).Line, fmt.Sprintf("chapter %s's code needs no "+
		"more than %s of literals and constant strings in all: with this one its values come to %d KiB, which go "+
		"whole into the compiled program and the grader's build cache; build large values at run time (make([]byte, n), "+
		"strings.Repeat)", g.chapter.ID, sizeText(maxStaticTotal), st.sum>>10))
}

// literalSize is what the composite literal lit writes: its type's size, or
// for a slice literal its length times its element's.
func literalSize(lit *ast.CompositeLit, info *types.Info) int64 {
	tv, ok := info.Types[lit]
	if !ok {
		return 0
	}
	if s, ok := tv.Type.Underlying().(*types.Slice); ok {
		return sliceLitLen(lit, info) * max(sizeOf(s.Elem()), 1)
	}
	return max(sizeOf(tv.Type), 0)
}
