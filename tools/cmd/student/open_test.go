package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// openChapters lists the chapters whose folder has an open starter.
func openChapters(t *testing.T, root string) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(root, "chapters", "*", filepath.FromSlash(openDir), "KEEP"))
	if err != nil {
		t.Fatal(err)
	}
	var chs []string
	for _, d := range dirs {
		chs = append(chs, filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(d)))))
	}
	return chs
}

// openOverlay is go build's -overlay for the chapter on its open track, as
// reset -mode open leaves it: the guided files it removes deleted, the open
// starter's in their place.
func openOverlay(t *testing.T, root, ch string) string {
	t.Helper()
	dir := filepath.Join(root, "chapters", ch)
	open := filepath.Join(dir, filepath.FromSlash(openDir))
	keep, err := readKeep(filepath.Join(open, "KEEP"))
	if err != nil {
		t.Fatal(err)
	}
	guided, err := goFilesIn(dir)
	if err != nil {
		t.Fatal(err)
	}
	starter, err := goFilesIn(open)
	if err != nil {
		t.Fatal(err)
	}
	replace := map[string]string{}
	for _, name := range guided {
		if !slices.Contains(keep, name) {
			replace[filepath.Join(dir, name)] = ""
		}
	}
	for _, name := range starter {
		replace[filepath.Join(dir, name)] = filepath.Join(open, name)
	}
	b, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "overlay.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func goCmd() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}

// TestOpenStartersFailCleanly builds every chapter's open track as reset
// leaves it — its package, its tests and its program — and runs its suite:
// every exercise must fail, cleanly (no build error, panic, race or leak),
// as on the guided starter.
func TestOpenStartersFailCleanly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs every open track's suite: not in -short")
	}
	root, err := filepath.Abs(courseRoot)
	if err != nil {
		t.Fatal(err)
	}
	chs := openChapters(t, root)
	if len(chs) == 0 {
		t.Fatal("no chapter has an open starter (chapters/NN/testdata/open/KEEP)")
	}
	for _, ch := range chs {
		t.Run(ch, func(t *testing.T) {
			if ok, why := supported(ch); !ok {
				t.Skip(why)
			}
			overlay := openOverlay(t, root, ch)
			vet := exec.Command(goCmd(), "vet", "-overlay", overlay, "./chapters/"+ch+"/...")
			vet.Dir = root
			if out, err := vet.CombinedOutput(); err != nil {
				t.Fatalf("go vet of chapter %s on its open track: %v\n%s", ch, err, out)
			}
			c, err := openCourse(root)
			if err != nil {
				t.Fatal(err)
			}
			rb, _ := c.findChapter(ch)
			test := exec.Command(goCmd(), "test", "-overlay", overlay, "-count=1", "-json", "./chapters/"+ch+"/")
			test.Dir = root
			out, _ := test.Output() // the tests fail: that is the point
			failed := map[string]bool{}
			for _, line := range strings.Split(string(out), "\n") {
				var ev struct{ Action, Test, Output string }
				if json.Unmarshal([]byte(line), &ev) != nil {
					continue
				}
				if ev.Action == "fail" && ev.Test != "" && !strings.Contains(ev.Test, "/") {
					failed[ev.Test] = true
				}
				for _, bad := range []string{"panic:", "WARNING: DATA RACE", "serverlab: leak:", "serverlab: watchdog:"} {
					if strings.Contains(ev.Output, bad) {
						t.Errorf("chapter %s's open starter: %s %q", ch, ev.Test, strings.TrimSpace(ev.Output))
					}
				}
			}
			for _, ex := range rb.Exercises {
				if !failed[ex.Test] {
					t.Errorf("chapter %s's open starter: %s (exercise %s) did not fail; an empty server must fail every exercise", ch, ex.Test, ex.ID)
				}
			}
		})
	}
}

// TestOpenStarterAPIIsTheSolutions keeps the open track gradable like the
// guided one: every declaration the open starter gives (its types, its
// constants, its functions' and methods' signatures) is declared the same
// way in the reference solution, which the same suite passes. A student's
// design then stands where the reference's does.
func TestOpenStarterAPIIsTheSolutions(t *testing.T) {
	root, err := filepath.Abs(courseRoot)
	if err != nil {
		t.Fatal(err)
	}
	if !fileExists(filepath.Join(root, "solutions")) {
		t.Skip("no solutions/ here (the student release)")
	}
	for _, ch := range openChapters(t, root) {
		open := filepath.Join(root, "chapters", ch, filepath.FromSlash(openDir))
		names, err := goFilesIn(open)
		if err != nil {
			t.Fatal(err)
		}
		sol, err := declsIn(filepath.Join(root, "solutions", ch), nil)
		if err != nil {
			t.Fatal(err)
		}
		mine, err := declsIn(open, names)
		if err != nil {
			t.Fatal(err)
		}
		servers := serverTypes(mine)
		for key, decl := range mine {
			if !ast.IsExported(strings.TrimPrefix(key[strings.LastIndex(key, " ")+1:], "*")) {
				continue
			}
			if servers[key] {
				continue // a server's fields are the design: the student's
			}
			if got, ok := sol[key]; !ok {
				t.Errorf("chapter %s: the open starter declares %s, which solutions/%s does not", ch, key, ch)
			} else if got != decl {
				t.Errorf("chapter %s: the open starter's %s differs from solutions/%s's:\n open: %s\n solution: %s", ch, key, ch, decl, got)
			}
		}
	}
}

// serverTypes are the types the open starter's constructors return a
// pointer to ("type Server"): their fields are the student's design, so only
// their methods' signatures are compared.
func serverTypes(decls map[string]string) map[string]bool {
	servers := map[string]bool{}
	for key, sig := range decls {
		if !strings.HasPrefix(key, "func New") {
			continue
		}
		_, results, _ := strings.Cut(sig, ") ")
		for _, f := range strings.FieldsFunc(results, func(r rune) bool { return strings.ContainsRune("(), ", r) }) {
			if name, ok := strings.CutPrefix(f, "*"); ok {
				servers["type "+name] = true
			}
		}
	}
	return servers
}

// declsIn maps the top-level declarations of dir's non-test Go files (only
// names, if given) to their code without comments; a function to its
// signature only (its body is the design).
func declsIn(dir string, names []string) (map[string]string, error) {
	if names == nil {
		var err error
		if names, err = goFilesIn(dir); err != nil {
			return nil, err
		}
	}
	decls := map[string]string{}
	fset := token.NewFileSet()
	for _, name := range names {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			var b strings.Builder
			switch d := d.(type) {
			case *ast.FuncDecl:
				key := d.Name.Name
				if d.Recv != nil && len(d.Recv.List) > 0 {
					printer.Fprint(&b, fset, d.Recv.List[0].Type)
					key = b.String() + "." + key
					b.Reset()
				}
				printer.Fprint(&b, fset, d.Type)
				decls["func "+key] = b.String()
			case *ast.GenDecl:
				for _, s := range d.Specs {
					b.Reset()
					switch s := s.(type) {
					case *ast.TypeSpec:
						printer.Fprint(&b, fset, s)
						decls["type "+s.Name.Name] = b.String()
					case *ast.ValueSpec:
						printer.Fprint(&b, fset, s)
						for _, n := range s.Names {
							decls[fmt.Sprintf("%s %s", d.Tok, n.Name)] = b.String()
						}
					}
				}
			}
		}
	}
	return decls, nil
}
