package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"serverlab/tools/internal/grade"
	"serverlab/tools/internal/rubric"
)

// causeIntegrity is make grade's cause for an exercise its gate refuses.
const causeIntegrity = "integrity"

// gateVerdict ends the output of an exercise the gate refuses: the line that
// says what the refusal costs, and that go test does not know it.
func gateVerdict(ch, id string) string {
	return fmt.Sprintf("make grade refuses this before it compiles anything, so exercise %s scores 0 there whatever go test says; "+
		"make allowed CH=%s lists what the chapter's code may call", id, ch)
}

// applyGate runs make grade's gate (grade.CheckChapter) over each chapter
// and marks the exercises it refuses as make grade would: cause integrity,
// the gate's own words as output. go test compiles code the gate refuses
// (unix.Dup in chapter 05, the given codec's functions behind an alias in
// chapter 01), and points on the student's screen that make grade then
// refuses are points the student counted on; this way status, next and watch
// never show them. A gate that cannot run here (no C compiler for the
// race build's type information, say) leaves the results as they are, with
// a note.
func (c *course) applyGate(ctx context.Context, chapters []rubric.Chapter, got map[string]result) {
	for _, ch := range chapters {
		refusals, err := grade.CheckChapter(ctx, c.root, ch)
		if err != nil {
			if ctx.Err() == nil {
				line, _, _ := strings.Cut(err.Error(), "\n")
				fmt.Fprintf(c.log, "note: make grade's gate could not check chapter %s here, so its points below may not be make grade's: %s\n", ch.ID, line)
			}
			continue
		}
		for _, ex := range ch.Exercises {
			if _, ran := got[ex.ID]; !ran {
				continue
			}
			var lines []string
			for _, rf := range refusals {
				if rf.Costs(ex.ID) {
					lines = append(lines, rf.Message)
				}
			}
			if lines != nil {
				got[ex.ID] = result{Cause: causeIntegrity, Output: append(lines, gateVerdict(ch.ID, ex.ID))}
			}
		}
	}
}

// refusals are the gate's distinct refusals among a chapter's results, in
// exercise order: status shows each once under the chapter's line.
func refusals(ch rubric.Chapter, cr chapterResults) []string {
	var lines []string
	for _, ex := range ch.Exercises {
		r := cr.Results[ex.ID]
		if r.Cause != causeIntegrity {
			continue
		}
		for _, l := range r.Output {
			if l != gateVerdict(ch.ID, ex.ID) && !slices.Contains(lines, l) {
				lines = append(lines, l)
			}
		}
	}
	return lines
}

// printRefusals writes a chapter's refusals under its status line.
func printRefusals(w io.Writer, ch rubric.Chapter, cr chapterResults) {
	lines := refusals(ch, cr)
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "    make grade refuses chapter %s's code (go test does not check this; make allowed CH=%s lists what it may call):\n", ch.ID, ch.ID)
	for _, l := range lines {
		fmt.Fprintf(w, "      %s\n", l)
	}
}

// allowed prints what a chapter's code may call beyond the ordinary standard
// packages and its own: the gate's allow-list, which the open track's
// "Design it yourself" points to.
func (c *course) allowed(w io.Writer, arg string) error {
	ch, err := c.findChapter(arg)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Chapter %s's code may use every package of its own folder, the standard library's ordinary packages, and:\n", ch.ID)
	for _, e := range grade.AllowList(ch.ID) {
		fmt.Fprintf(w, "  %s\n", e)
	}
	for _, f := range ch.Screen.Forbid {
		fmt.Fprintf(w, "but not %s in exercise %s: %s\n", f.Ref, strings.Join(f.Exercises, ", "), f.Why)
	}
	fmt.Fprintln(w, "An entry without a member allows the whole package; \"T.*\" every field and method of T. "+
		"Anything else make grade refuses before it compiles (docs/grading.md#the-gate); make status shows the refusal.")
	return nil
}
