package grade

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"serverlab/tools/internal/rubric"
)

// gateTree runs the gate over tree/NN of the course (the maintainers' tree),
// returning its refusals, its notes and what of the allow-list it used.
func gateTree(t *testing.T, root string, ch rubric.Chapter, tree string) (refusals, notes []Hit, used map[string]bool) {
	t.Helper()
	g := &gate{fset: nil}
	_ = g
	hits, used, err := gateWithUse(context.Background(), root, "serverlab", tree+"/"+ch.ID, ch, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if teachOnly[h.Rule] {
			notes = append(notes, h)
		} else {
			refusals = append(refusals, h)
		}
	}
	return refusals, notes, used
}

// The course's own solutions and starters (the guided ones, their cmd/ and
// the open track's in testdata/open) pass the gate: the allow-list is
// derived from them. Every entry of the allow-list is used by some of them,
// so that it cannot keep what no chapter needs.
func TestGatePassesTheCourse(t *testing.T) {
	r, err := rubric.Load()
	if err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.Abs("../../..")
	for _, ch := range r.Chapters {
		used := map[string]bool{}
		for _, tree := range []string{"solutions", "chapters"} {
			start := time.Now()
			refusals, _, u := gateTree(t, root, ch, tree)
			t.Logf("%s/%s: %v", tree, ch.ID, time.Since(start).Round(time.Millisecond))
			for _, h := range refusals {
				t.Errorf("%s/%s: %s", tree, ch.ID, h)
			}
			maps.Copy(used, u)
		}
		for _, e := range chapterAllow[ch.ID] {
			if !used[e] {
				t.Errorf("gate_allow.go: chapter %s allows %s, which neither solutions/%s nor chapters/%s uses: remove it", ch.ID, e, ch.ID, ch.ID)
			}
		}
	}
}

func TestScreenRulesMatchRubric(t *testing.T) {
	if !slices.Equal(screenRules, rubric.Rules) {
		t.Errorf("screen.go's rules %q and rubric.Rules %q differ", screenRules, rubric.Rules)
	}
}

// gateWithUse is gateChapter for tests: it also returns the allow-list's
// entries the tree used.
func gateWithUse(ctx context.Context, root, module, chapterDir string, spec rubric.Chapter, replace map[string]string) ([]Hit, map[string]bool, error) {
	g := newGate(root, module, chapterDir, spec)
	if err := g.run(ctx, replace, nil); err != nil {
		return nil, nil, err
	}
	return g.hits, g.used, nil
}

var _ = fmt.Sprint
var _ = os.Getpid
var _ = strings.Cut
