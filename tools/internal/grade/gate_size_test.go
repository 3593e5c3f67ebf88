package grade

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"serverlab/tools/internal/rubric"
)

// TestGateRefusesValuesTooLargeToBuild: one line of a large array costs the
// grader's build cache its size (cheater5 B: 256 MiB for 40 bytes of
// source); the gate refuses each way of writing one, and lets the course's
// own sizes through.
func TestGateRefusesValuesTooLargeToBuild(t *testing.T) {
	tests := []struct {
		name, src, want string // want: "file:line: prefix", "" for none
	}{
		{"an array literal", "package p\n\nvar bloat = [1 << 28]byte{1<<28 - 1: 1}\n",
			"01/a.go:3: chapter 01's code needs no value of 256 MiB"},
		{"a zero array", "package p\n\nvar big [64 << 20]byte\n", "01/a.go:3: chapter 01's code needs no value of 64 MiB"},
		{"a named array type", "package p\n\ntype T [2][1 << 20]int64\n\nvar x T\n", "01/a.go:3: chapter 01's code needs no value of 16 MiB"},
		{"a struct of arrays", "package p\n\nvar s = struct{ a, b [1 << 20]byte }{}\n", "01/a.go:3: chapter 01's code needs no value of 2 MiB"},
		{"a slice literal with a large index", "package p\n\nvar b = []byte{1 << 28: 1}\n", "01/a.go:3: chapter 01's code needs no value of 256 MiB"},
		{"a generic instance", "package p\n\ntype Box[T any] struct{ v [1024]T }\n\nvar b Box[[1 << 12]byte]\n", "01/a.go:5: chapter 01's code needs no value of 4 MiB"},
		{"an overflowing array", "package p\n\nvar x [1 << 40][1 << 40]byte\n", "01/a.go:3: chapter 01's code needs no value of more than a TiB"},
		{"a constant string doubled", doubled("p", 40, "") + "\nvar V = s40\n", "01/a.go:19: chapter 01's code needs no value of 1 MiB: a constant string"},
		{"a constant string, a group's repeated expression", "package p\n\nconst (\n\ta = \"xxxxxxxx\"\n\tb = a + a\n)\n" + doubled("p", 20, "b") + "\nvar V = s20\n", "01/a.go:"},
		{"a constant string of an ordinary length", doubled("p", 12, "") + "\nvar V = s12\n", ""},
		{"a buffer of an ordinary size", "package p\n\nvar buf [64 << 10]byte\n\nvar s = []byte{4095: 0}\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := gateRoot(t, map[string]string{"01/a.go": tt.src})
			hits, err := gateChapter(context.Background(), root, "serverlab", "chapters/01", rubric.Chapter{ID: "01"}, nil, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range hits {
				if !teachOnly[h.Rule] {
					got = append(got, strings.TrimPrefix(h.String(), "chapters/"))
				}
			}
			if tt.want == "" {
				if len(got) > 0 {
					t.Errorf("refused, want it let through:\n%s", strings.Join(got, "\n"))
				}
				return
			}
			for _, g := range got {
				if strings.HasPrefix(g, tt.want) {
					return
				}
			}
			t.Errorf("no refusal %q; got:\n%s", tt.want, strings.Join(got, "\n"))
		})
	}
}

// doubled is Go source declaring s0 (16 bytes, or from) and s1 … sN, each
// the one before twice.
func doubled(pkg string, n int, from string) string {
	var b strings.Builder
	if from == "" {
		fmt.Fprintf(&b, "package %s\n\nconst s0 = \"xxxxxxxxxxxxxxxx\"\n", pkg)
	} else {
		fmt.Fprintf(&b, "\nconst s0 = %s\n", from)
	}
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "const s%d = s%d + s%d\n", i, i-1, i-1)
	}
	return b.String()
}
