package grade

import "fmt"

// The gate's own memory. Type-checking costs far more than the source it
// reads: go/types records a type and a constant value for every expression,
// and a file of nearly 4 MiB of `[]int{1,1,…}` (each under readTreeFile's
// bound) cost the grader about 0.5 GB, linearly (cheater5 F: 8 such files in
// a subpackage nothing imports, never compiled, only gated, took 148 s and
// 4.79 GB as the grader's user, outside the sandbox). So the gate bounds what
// it reads of a chapter's tree in all, not only file by file: the largest
// chapter of the course (08, its reference solution and the course's wiring)
// is 141 KB of Go in 26 files; a student's tree has fourteen times that room.
const (
	maxGateBytes = 2 << 20 // bytes of Go source the gate reads of one chapter's tree
	maxGateFiles = 1000    // Go files likewise
)

// gateInput is what the gate has read of the tree so far.
type gateInput struct {
	bytes, files int
	over         bool // refused: nothing more is read
}

// overInput counts a Go file of n bytes against the bounds, and refuses the
// tree (once, at the file that crosses them) when it goes past: the file
// and every one after it are then neither parsed nor checked, and the
// chapter is lost to integrity, so nothing unread is let through.
func (g *gate) overInput(rel string, n int) bool {
	in := &g.input
	if in.over {
		return true
	}
	in.bytes += n
	in.files++
	if in.bytes <= maxGateBytes && in.files <= maxGateFiles {
		return false
	}
	in.over = true
	g.refuse(ruleImport, rel, 1, fmt.Sprintf("chapter %s's tree holds more Go than the gate reads (at most %d files and %d MiB of Go source, "+
		"where the largest chapter's reference is 141 KB): generated data or code written as Go is not the exercise; "+
		"keep data out of .go files, or out of chapters/%s", g.chapter.ID, maxGateFiles, maxGateBytes>>20, g.chapter.ID))
	return true
}
