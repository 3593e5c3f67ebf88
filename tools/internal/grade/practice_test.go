package grade

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"serverlab/tools/internal/rubric"
)

// owners is what the stubs of chapters/ say: every declaration
// holding a TODO(ex N.K), with its exercises. The student release's
// chapters/ are the student's, whose TODOs may be gone: the table is the
// maintainers' to check.
func TestPracticeOwners(t *testing.T) {
	root, _ := filepath.Abs("../../..")
	if _, err := os.Stat(filepath.Join(root, "solutions")); err != nil {
		t.Skip("no solutions/: the student release")
	}
	todo := regexp.MustCompile(`TODO\(ex (\d+\.\d+)\)`)
	dirs, _ := filepath.Glob(filepath.Join(root, "chapters", "[0-9][0-9]"))
	for _, dir := range dirs {
		id := filepath.Base(dir)
		got := map[string][]string{}
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		fset := token.NewFileSet()
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok {
					continue
				}
				for _, cg := range f.Comments {
					if cg.Pos() < fd.Pos() || cg.End() > fd.End() {
						continue
					}
					for _, m := range todo.FindAllStringSubmatch(cg.Text(), -1) {
						if k := declKey(fd); !slices.Contains(got[k], m[1]) {
							got[k] = append(got[k], m[1])
						}
					}
				}
			}
		}
		want := owners(id)
		for k, exs := range got {
			if !slices.Equal(want[k], exs) {
				t.Errorf("chapter %s: %s holds the TODOs of %v, owners (testkit.StubOwners) says %v", id, k, exs, want[k])
			}
		}
		for k, exs := range want {
			if got[k] == nil {
				t.Errorf("chapter %s: owners (testkit.StubOwners) names %s (%v), which holds no TODO", id, k, exs)
			}
		}
	}
}

// practiceRoot is a module root with the course's go.mod, its given users
// package and files (path → source) under chapters/.
func practiceRoot(t *testing.T, files map[string]string) string {
	t.Helper()
	root := gateRoot(t, files)
	given, _ := filepath.Glob("../../../tools/given/users/*.go")
	for _, f := range given {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(root, "tools/given/users", filepath.Base(f)), string(b))
	}
	return root
}

// Each case is a chapter 01 file; want is the exercises the practice
// costs (nil: no practice broken).
func TestPractices(t *testing.T) {
	const head = "package p\n\nimport (\n\t\"crypto/subtle\"\n\t\"sync\"\n\n\t\"serverlab/tools/given/users\"\n)\n\nvar _ = subtle.ConstantTimeCompare\n\ntype Store struct{ wg sync.WaitGroup }\ntype Server struct{ wg sync.WaitGroup }\n\n"
	tests := []struct {
		name, src string
		want      []string
		what      string
	}{
		{"add in the goroutine", "func (s *Server) Serve() { go func() { s.wg.Add(1); defer s.wg.Done() }() }\n", []string{"1.4"}, "got: s.wg.Add(1) as the goroutine's first statement"},
		{"add before go", "func (s *Server) Serve() { s.wg.Add(1); go func() { defer s.wg.Done() }() }\n", nil, ""},
		{"WaitGroup.Go", "func (s *Server) Serve() { s.wg.Go(func() {}) }\n", nil, ""},
		{"a helper a stub calls", "func (s *Server) spawn() { go func() { s.wg.Add(1); s.wg.Done() }() }\nfunc (s *Server) Close() { s.spawn() }\n", []string{"1.4", "1.6"}, "exercise 1.4, 1.6:"},
		{"a helper nothing calls", "func (s *Server) spawn() { go func() { s.wg.Add(1); s.wg.Done() }() }\n", nil, ""},
		{"password ==", "func (s *Store) Register(u users.User) bool { var old users.User; return old.Password == u.Password }\n", []string{"1.3"}, "got: old.Password == u.Password"},
		{"password != in OpenStore", "func OpenStore(u, old users.User) bool { return u.Password != old.Password }\n", []string{"1.3"}, "exercise 1.3:"},
		{"empty password", "func (s *Store) Register(u users.User) bool { return u.Password == \"\" }\n", nil, ""},
		{"constant time", "func (s *Store) Register(u, old users.User) bool { return subtle.ConstantTimeCompare([]byte(u.Password), []byte(old.Password)) == 1 }\n", nil, ""},
		{"a field of another type", "type acct struct{ Password string }\nfunc (s *Store) Register(a, b acct) bool { return a.Password == b.Password }\n", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := practiceRoot(t, map[string]string{"01/a.go": head + tt.src})
			hits, err := gateChapter(context.Background(), root, "serverlab", "chapters/01", rubric.Chapter{ID: "01"}, nil, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []Hit
			for _, h := range hits {
				if h.Rule == rulePractice {
					got = append(got, h)
				} else {
					t.Errorf("unexpected %s", h)
				}
			}
			if tt.want == nil {
				if len(got) != 0 {
					t.Fatalf("practices %v, want none", got)
				}
				return
			}
			if len(got) != 1 || !slices.Equal(got[0].Exercises, tt.want) || !strings.Contains(got[0].What, tt.what) {
				t.Fatalf("practices %v, want one costing %v that says %q", got, tt.want, tt.what)
			}
			t.Log(got[0])
			ch := &ChapterResult{Exercises: []ExerciseResult{{ID: "1.3", Cause: CauseNotRun}, {ID: "1.4", Cause: CauseNotRun}, {ID: "1.6", Cause: CauseNotRun}}}
			if lines := screenCost(got, ch); len(lines) != 0 {
				t.Errorf("a practice is an integrity line: %q", lines)
			}
			for _, ex := range ch.Exercises {
				if slices.Contains(tt.want, ex.ID) != (ex.Cause == CauseFailed) {
					t.Errorf("exercise %s: cause %q", ex.ID, ex.Cause)
				}
				if ex.Cause == CauseFailed && !strings.HasPrefix(ex.Message, "chapters/01/a.go:") {
					t.Errorf("exercise %s: message %q", ex.ID, ex.Message)
				}
			}
			if hits, _ := gateChapter(context.Background(), root, "serverlab", "chapters/01", rubric.Chapter{ID: "01"}, map[string]bool{rulePractice: true}, nil, nil); len(hits) != 0 {
				t.Errorf("-allow practice still reports %v", hits)
			}
		})
	}
}
