package grade

import (
	"context"
	"strings"
	"testing"

	"serverlab/tools/internal/rubric"
)

// TestGateSizesEveryConstantStringForm: the size rule once counted
// string('A') as 0 bytes, and doubling it 26 times made 64 MiB it let
// through (cheater6 C). Every form a constant string may take is measured
// (a conversion of an integer is one rune's encoding; min and max are
// their longest argument) or counts as too long, and the ordinary uses pass.
func TestGateSizesEveryConstantStringForm(t *testing.T) {
	tests := []struct {
		name, src string
		refused   bool
	}{
		{"string(rune) doubled", "package p\n" + doubled("p", 21, "string('A')") + "\nvar V = s21\n", true},
		{"a named string type's conversion doubled", "package p\n\ntype S string\n" + doubled("p", 21, "S(65)") + "\nvar V = s21\n", true},
		{"max of strings doubled", "package p\n" + doubled("p", 20, `max("xxxx", "")`) + "\nvar V = s20\n", true},
		{"string(rune) of an ordinary length", "package p\n" + doubled("p", 12, "string('A')") + "\nvar V = s12\n", false},
		{"a conversion and min as code writes them", "package p\n\ntype S string\n\nconst a, b = S(\"x\"), min(\"a\", \"b\")\n\nvar V = string(rune(0x2603)) + string(a) + b\n", false},
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
				if h.Rule == ruleSize {
					got = append(got, h.String())
				}
			}
			if tt.refused && len(got) == 0 {
				t.Errorf("sent %q; expected a %q refusal, got none: a form strLen does not measure counts 0 (gate_size.go)", tt.src, ruleSize)
			}
			if !tt.refused && len(got) > 0 {
				t.Errorf("sent %q; expected it let through, got:\n%s", tt.src, strings.Join(got, "\n"))
			}
		})
	}
}
