package grade

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"serverlab/tools/internal/rubric"
)

// TestGateBoundsTheChapterStaticTotal: each value under the size rule's
// limit, but many of them (cheater6 C2: 64 literals just under 1 MiB, a 67 MB
// cache entry, 100/100), are refused at the one that takes the chapter past
// maxStaticTotal; a few large values and a doubling chain up to the one-value
// limit pass.
func TestGateBoundsTheChapterStaticTotal(t *testing.T) {
	many := func(n int) string {
		var b strings.Builder
		b.WriteString("package p\n")
		for i := range n {
			fmt.Fprintf(&b, "\nvar a%d = [1<<20 - 8]byte{1}\n", i)
		}
		return b.String()
	}
	tests := []struct {
		name  string
		files map[string]string
		want  string // "" for none
	}{
		{"64 literals just under the limit", map[string]string{"01/a.go": many(64)},
			"01/a.go:11: chapter 01's code needs no more than 4 MiB of literals and constant strings in all"},
		{"spread over two files", map[string]string{"01/a.go": many(3), "01/b.go": many(3)},
			"01/b.go:5: chapter 01's code needs no more than 4 MiB"},
		{"three literals just under the limit", map[string]string{"01/a.go": many(3)}, ""},
		{"a doubling chain up to the limit", map[string]string{"01/a.go": "package p\n" + doubled("p", 15, `"xxxxxxxxxxxxxxxx"`) + "\nvar V = s15\n"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := gateRoot(t, tt.files)
			hits, err := gateChapter(context.Background(), root, "serverlab", "chapters/01", rubric.Chapter{ID: "01"}, nil, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range hits {
				if h.Rule == ruleSize {
					got = append(got, strings.TrimPrefix(h.String(), "chapters/"))
				}
			}
			if tt.want == "" {
				if len(got) > 0 {
					t.Errorf("expected it let through; got:\n%s", strings.Join(got, "\n"))
				}
				return
			}
			if len(got) != 1 || !strings.HasPrefix(got[0], tt.want) {
				t.Errorf("expected one refusal %q (gate_size_total.go); got:\n%s", tt.want, strings.Join(got, "\n"))
			}
		})
	}
}
