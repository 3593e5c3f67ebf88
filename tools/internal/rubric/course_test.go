package rubric

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"testing"
)

// courseRoot is the module root, seen from this package's directory (go test
// runs a package's tests in its own directory).
const courseRoot = "../../.."

// graded test functions, as the chapters' test wiring declares them.
var testFuncPattern = regexp.MustCompile(`(?m)^func (TestEx[0-9]+_[0-9]+_\w*)\(t \*testing\.T\)`)

// TestREADMEsAgreeWithRubric keeps the rubric, the lessons and the test wiring
// in step: every chapter in the rubric exists, its README's exercise table is
// the rubric's, and every graded test is declared in both chapters/NN and
// solutions/NN (when there is one) — and nothing named TestEx… there escapes the rubric.
func TestREADMEsAgreeWithRubric(t *testing.T) {
	r, err := Load()
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	for _, ch := range r.Chapters {
		t.Run(ch.ID, func(t *testing.T) {
			readmePath := filepath.Join(courseRoot, "chapters", ch.ID, "README.md")
			readme, err := os.ReadFile(readmePath)
			if err != nil {
				t.Errorf("the rubric lists chapter %s, but its lesson cannot be read: %v", ch.ID, err)
			} else if err := CheckREADME(ch, readme); err != nil {
				t.Errorf("%s disagrees with the rubric:\n%v", readmePath, err)
			}
			for _, tree := range courseTrees(t) {
				checkTestWiring(t, ch, filepath.Join(courseRoot, tree, ch.ID))
			}
		})
	}
}

// courseTrees are the folders that hold a copy of every chapter: chapters/,
// and solutions/ unless this is the student release, which ships without it.
func courseTrees(t *testing.T) []string {
	if _, err := os.Stat(filepath.Join(courseRoot, "solutions")); errors.Is(err, fs.ErrNotExist) {
		t.Log("no solutions/ (the student release): checking chapters/ only")
		return []string{"chapters"}
	}
	return []string{"chapters", "solutions"}
}

// checkTestWiring checks that dir's *_test.go files declare exactly the
// chapter's graded tests.
func checkTestWiring(t *testing.T, ch Chapter, dir string) {
	t.Helper()
	declared, err := declaredTests(dir)
	if err != nil {
		t.Errorf("the rubric lists chapter %s, but %s cannot be scanned: %v", ch.ID, dir, err)
		return
	}
	inRubric := map[string]bool{}
	for _, ex := range ch.Exercises {
		inRubric[ex.Test] = true
		if !declared[ex.Test] {
			t.Errorf("%s: exercise %s is graded by %s, but no *_test.go there declares func %s(t *testing.T)",
				dir, ex.ID, ex.Test, ex.Test)
		}
	}
	var extra []string
	for name := range declared {
		if !inRubric[name] {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	for _, name := range extra {
		t.Errorf("%s declares %s, which the rubric does not grade: add it to rubric.json or rename it", dir, name)
	}
}

// declaredTests returns the graded test functions declared in dir/*_test.go.
// A missing dir is an error: the rubric must not list chapters that are not
// there.
func declaredTests(dir string) (map[string]bool, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	declared := map[string]bool{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, m := range testFuncPattern.FindAllSubmatch(src, -1) {
			declared[string(m[1])] = true
		}
	}
	return declared, nil
}

// TestJudgeWiringStatesImplData: the data an Impl carries (Threaded,
// SlowsSender, GoroutinePerClient: what the chapter's design is, which
// decides which checks run) is stated twice, by the wiring that hands the
// package to its suite (impl_test.go) and by the judge's wiring, which takes
// it from the course and never from the student's process. The two must
// agree, field for field, or the grader runs other checks than go test.
func TestJudgeWiringStatesImplData(t *testing.T) {
	for _, tree := range []string{"chapters", "solutions"} {
		dirs, _ := filepath.Glob(filepath.Join(courseRoot, tree, "[0-9][0-9]"))
		for _, dir := range dirs {
			local, err := implData(filepath.Join(dir, "impl_test.go"), false)
			if err != nil {
				t.Errorf("%s: %v", dir, err)
				continue
			}
			judged, err := implData(filepath.Join(dir, "judge_test.go"), true)
			if err != nil {
				t.Errorf("%s: %v", dir, err)
				continue
			}
			for typ, want := range local {
				if got := judged[typ]; !maps.Equal(got, want) {
					rel, _ := filepath.Rel(courseRoot, dir)
					t.Errorf("%s: %s's data in impl_test.go is %v, in judge_test.go %v: state the same in judge.Remote(%s{…})", rel, typ, want, got, typ)
				}
			}
		}
	}
}

// implData reads the Impl composite literals of a wiring file (in judge
// wiring, those passed to judge.Remote) and returns, by type ("chattest.Impl"),
// the fields set to a constant (true, 3, "x"), as written.
func implData(path string, judgeWiring bool) (map[string]map[string]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		sel, ok := lit.Type.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Impl" {
			return true
		}
		typ := sel.X.(*ast.Ident).Name + ".Impl"
		fields := map[string]string{}
		for _, e := range lit.Elts {
			kv, ok := e.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			switch v := kv.Value.(type) {
			case *ast.Ident:
				if v.Name == "true" || v.Name == "false" {
					fields[kv.Key.(*ast.Ident).Name] = v.Name
				}
			case *ast.BasicLit:
				fields[kv.Key.(*ast.Ident).Name] = v.Value
			}
		}
		out[typ] = fields
		return false
	})
	if judgeWiring && len(out) == 0 {
		return nil, fmt.Errorf("%s passes no Impl literal to judge.Remote", filepath.Base(path))
	}
	return out, nil
}
