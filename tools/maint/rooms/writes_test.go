package rooms

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// courseWriters are the packages that write into the course tree itself:
// make chapters (the mirror, the open starters), make reset and make hint
// (the student's files and state), make student-release (dist/).
var courseWriters = map[string]string{
	"tools/maint/coursecheck": "writeAtomic",
	"tools/cmd/student":       "writeFile",
}

// TestGeneratorsWriteWholeFiles: a package that writes the course's files
// writes each through its one whole-or-nothing helper (a temporary file
// renamed over the old one), never with os.WriteFile or os.Create on the
// file itself: a run stopped half-way (a refusal, an error, ^C) must leave
// the old file, never a truncated one. The class is a failure path that
// leaves partial writes (newcomer4: make chapters left chapter 06 half made).
func TestGeneratorsWriteWholeFiles(t *testing.T) {
	for pkg, helper := range courseWriters {
		files, err := filepath.Glob(filepath.Join(root, pkg, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v): the package moved; update courseWriters", pkg, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			fset := token.NewFileSet()
			file, err := parser.ParseFile(fset, f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range file.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Name.Name == helper {
					continue
				}
				ast.Inspect(fn, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					sel, ok := call.Fun.(*ast.SelectorExpr)
					if !ok {
						return true
					}
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == "os" && (sel.Sel.Name == "WriteFile" || sel.Sel.Name == "Create") {
						t.Errorf("%s: %s calls os.%s: write the file through %s (whole or not at all), so that a failure half-way leaves the old file",
							fset.Position(call.Pos()), fn.Name.Name, sel.Sel.Name, helper)
					}
					return true
				})
			}
		}
	}
}
