package grade

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"serverlab/tools/internal/rubric"
)

// Each case is a chapter 02 file; want is the exercises splitlock costs
// (nil: nothing found).
func TestPracticeSplitLock(t *testing.T) {
	const head = "package p\n\nimport \"sync\"\n\ntype client struct{ name string }\ntype Server struct {\n\tmu     sync.Mutex\n\tonline map[string]*client\n}\n\n"
	tests := []struct {
		name, src string
		want      []string
	}{
		{"test and claim under two locks", "func (s *Server) join(c *client) bool {\n\ts.mu.Lock()\n\t_, taken := s.online[c.name]\n\ts.mu.Unlock()\n\tif taken {\n\t\treturn false\n\t}\n\ts.mu.Lock()\n\ts.online[c.name] = c\n\ts.mu.Unlock()\n\treturn true\n}\n", []string{"2.1"}},
		{"one section, deferred", "func (s *Server) join(c *client) bool {\n\ts.mu.Lock()\n\tdefer s.mu.Unlock()\n\tif _, taken := s.online[c.name]; taken {\n\t\treturn false\n\t}\n\ts.online[c.name] = c\n\treturn true\n}\n", nil},
		{"tested again before the change", "func (s *Server) join(c *client) bool {\n\ts.mu.Lock()\n\t_, taken := s.online[c.name]\n\ts.mu.Unlock()\n\tif taken {\n\t\treturn false\n\t}\n\ts.mu.Lock()\n\tdefer s.mu.Unlock()\n\tif _, taken := s.online[c.name]; taken {\n\t\treturn false\n\t}\n\ts.online[c.name] = c\n\treturn true\n}\n", nil},
		{"a delete after a lookup", "func (s *Server) join(c *client) bool {\n\ts.mu.Lock()\n\tn := len(s.online)\n\ts.mu.Unlock()\n\ts.mu.Lock()\n\tdelete(s.online, c.name)\n\ts.mu.Unlock()\n\treturn n > 0\n}\n", []string{"2.1"}},
		{"another map changed", "func (s *Server) join(c *client) bool {\n\tother := map[string]bool{}\n\ts.mu.Lock()\n\t_, taken := s.online[c.name]\n\ts.mu.Unlock()\n\ts.mu.Lock()\n\tother[c.name] = taken\n\ts.mu.Unlock()\n\treturn true\n}\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := practiceRoot(t, map[string]string{"02/a.go": head + tt.src})
			hits, err := gateChapter(context.Background(), root, "serverlab", "chapters/02", rubric.Chapter{ID: "02"}, nil, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == nil {
				if len(hits) != 0 {
					t.Fatalf("hits %v, want none", hits)
				}
				return
			}
			if len(hits) != 1 || hits[0].Rule != rulePractice || !slices.Equal(hits[0].Exercises, tt.want) ||
				!strings.Contains(hits[0].What, "check-then-act") {
				t.Fatalf("hits %v, want one practice costing %v", hits, tt.want)
			}
			t.Log(hits[0])
		})
	}
}

// TestSolutionsKeepPractices: no reference solution breaks a practice (a
// practice that did would cost a correct solution its points).
func TestSolutionsKeepPractices(t *testing.T) {
	root, _ := filepath.Abs("../../..")
	if _, err := os.Stat(filepath.Join(root, "solutions")); err != nil {
		t.Skip("no solutions/: the student release")
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "solutions", "[0-9][0-9]"))
	for _, dir := range dirs {
		id := filepath.Base(dir)
		t.Run(id, func(t *testing.T) {
			hits, err := gateChapter(context.Background(), root, "serverlab", "solutions/"+id, rubric.Chapter{ID: id}, nil, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				if h.Rule == rulePractice {
					t.Errorf("%s", fmt.Sprint(h))
				}
			}
		})
	}
}
