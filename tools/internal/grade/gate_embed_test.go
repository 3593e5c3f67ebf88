package grade

import (
	"context"
	"strings"
	"testing"

	"serverlab/tools/internal/rubric"
)

// TestGateRefusesEmbed: a //go:embed file reaches the build cache whole, past
// the size rule that reads Go source (cheater6 A: 600 MiB embedded, 629 MB
// cache entry, 100/100). No chapter's allow-list has "embed", so the
// directive is refused in every chapter; a chapter that lists it may embed.
func TestGateRefusesEmbed(t *testing.T) {
	src := "package p\n\nimport _ \"embed\"\n\n// Looks like an asset.\n//\n//go:embed bloat.bin\nvar bloat []byte\n"
	files := map[string]string{"01/a.go": src, "01/bloat.bin": "x"}
	for _, allowed := range []bool{false, true} {
		root := gateRoot(t, files)
		id := "01"
		if allowed { // a chapter of the test's own whose list has "embed"
			id = "embed-test"
			chapterAllow[id] = []string{"embed"}
			defer delete(chapterAllow, id)
		}
		hits, err := gateChapter(context.Background(), root, "serverlab", "chapters/01", rubric.Chapter{ID: id}, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range hits {
			if !teachOnly[h.Rule] {
				got = append(got, strings.TrimPrefix(h.String(), "chapters/"))
			}
		}
		want := "01/a.go:7: chapter 01's code needs no //go:embed"
		switch {
		case !allowed && (len(got) != 1 || !strings.HasPrefix(got[0], want)):
			t.Errorf("sent %q; expected one refusal %q (gate_embed.go); got:\n%s", src, want, strings.Join(got, "\n"))
		case allowed && len(got) > 0:
			t.Errorf("sent %q to a chapter whose allow-list has \"embed\"; expected it let through; got:\n%s", src, strings.Join(got, "\n"))
		}
	}
}
