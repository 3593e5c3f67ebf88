package grade

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"serverlab/tools/internal/rubric"
)

// A tree with more Go than the gate reads is refused at the file that
// crosses the bound, before that file is parsed: files each under
// readTreeFile's bound, in a subpackage nothing imports, cost the grader
// gigabytes to type-check (cheater5, F). One file fewer is
// read and checked.
func TestGateBoundsItsInput(t *testing.T) {
	line := strings.Repeat("1,", 40) + "\n"
	// Bytes, not ints: a value is at most 1 MiB (gate_size.go), which half a
	// million ints would pass.
	bulk := "package bulk\n\nvar V = []byte{\n" + strings.Repeat(line, (maxGateBytes/2-4096)/len(line)) + "}\n"
	for _, tt := range []struct {
		name  string
		files int
		want  string
	}{
		{"within the bound", 2, ""},
		{"past the bound", 3, "01/bulk/b2.go:1: chapter 01's tree holds more Go than the gate reads"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"01/a.go": "package p\n"}
			for i := range tt.files {
				files[fmt.Sprintf("01/bulk/b%d.go", i)] = bulk
			}
			root := gateRoot(t, files)
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
			switch {
			case tt.want == "" && len(got) > 0:
				t.Errorf("refused, want it read and let through:\n%s", strings.Join(got, "\n"))
			case tt.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], tt.want)):
				t.Errorf("got:\n%s\nwant one refusal %q", strings.Join(got, "\n"), tt.want)
			}
		})
	}
}
