package grade

import (
	"context"
	"slices"

	"serverlab/tools/internal/rubric"
)

// Refusal is one thing the gate refuses in a chapter, worded as make grade
// words it.
type Refusal struct {
	Message   string   // the line the exercises lose their points with (Hit.String)
	Exercises []string // the exercises it costs; nil: every exercise of the chapter
}

// Costs reports whether the refusal costs exercise id.
func (r Refusal) Costs(id string) bool { return r.Exercises == nil || slices.Contains(r.Exercises, id) }

// CheckChapter runs make grade's gate over spec's folder (chapters/NN) of
// the checkout at root, with the rules spec's rubric entry switches off, and
// returns what it refuses (screening's notes, which cost nothing, are left
// out). The student's tools run it so that a chapter's points on the
// student's screen are never points the grader then refuses: go test
// compiles code the gate would not let through (unix.Dup in chapter 05, the
// given codec's functions behind an alias in chapter 01).
//
// Unlike make grade it checks the tree as it is, without the course's
// pristine copies of the given files laid over it: those are the grader's
// own check (pristine.go), reported by make grade alone.
func CheckChapter(ctx context.Context, root string, spec rubric.Chapter) ([]Refusal, error) {
	module, err := modulePath(root, "")
	if err != nil {
		return nil, err
	}
	allowed := map[string]bool{}
	for _, r := range spec.Screen.Allow {
		allowed[r] = true
	}
	hits, err := gateChapter(ctx, root, module, "chapters/"+spec.ID, spec, allowed, nil, nil)
	if err != nil {
		return nil, err
	}
	var out []Refusal
	for _, h := range hits {
		if teachOnly[h.Rule] { // as screenCost: a note costs nothing
			continue
		}
		out = append(out, Refusal{Message: h.String(), Exercises: h.Exercises})
	}
	return out, nil
}

// AllowList is what chapter id's code may use beyond the ordinary standard
// packages and its own: the gate's allow-list, in its order.
func AllowList(id string) []string {
	return slices.Concat(everyChapter, chapterAllow[id])
}
