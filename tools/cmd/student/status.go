package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"
	"unicode/utf8"

	"serverlab/tests/testkit"
	"serverlab/tools/internal/rubric"
)

// status prints one line per chapter, in course order (points, a bar, how
// many exercises pass), the total, and the next exercise to do.
func (c *course) status(ctx context.Context, w io.Writer) error {
	start := time.Now()
	all, err := c.results(ctx)
	if err != nil {
		return err
	}
	took := time.Since(start)
	fmt.Fprintf(w, "%-3s %-46s %7s  %s\n", "ch", "chapter", "points", "progress")
	total, most := 0, 0
	for _, ch := range c.rb.Chapters {
		most += ch.MaxPoints()
		cr, ran := all[ch.ID]
		if !ran {
			why := "not in this checkout"
			if ok, reason := supported(ch.ID); !ok {
				why = reason
			}
			fmt.Fprintf(w, "%-3s %-46s %7s  %s\n", ch.ID, clip(ch.Title, 46), "-", why)
			continue
		}
		got, passed := score(ch, cr)
		total += got
		fmt.Fprintf(w, "%-3s %-46s %7s  %s %d of %d\n", ch.ID, clip(ch.Title, 46),
			fmt.Sprintf("%d/%d", got, ch.MaxPoints()), bar(got, ch.MaxPoints(), 20), passed, len(ch.Exercises))
	}
	fmt.Fprintf(w, "%-3s %-46s %7s\n", "", "total", fmt.Sprintf("%d/%d", total, most))
	if c.ranTests { // what it cost this time, among the notes; cached results cost nothing
		if line := busyLine(testkit.LoadAverage(), runtime.NumCPU(), took); line != "" {
			fmt.Fprintln(c.log, line)
		}
	}
	fmt.Fprintln(w, c.nextLine(all))
	return nil
}

// busyLine says, on a busy machine, what the load costs: the tests' waits
// grow with it (testkit.BusyScale, as under the grader), so a failing check
// takes longer to fail, and everything takes longer to build and run. ""
// on a machine that is not busy.
func busyLine(load float64, cpus int, took time.Duration) string {
	scale := testkit.BusyScale(load, cpus)
	if scale <= 1 {
		return ""
	}
	return fmt.Sprintf("note: this machine is busy (load %.0f on %d CPUs): this took %s, and the tests wait up to %.1f× as long "+
		"before failing a check; a quiet machine is faster", load, cpus, took.Round(time.Second), scale)
}

// score is a chapter's points and number of passing exercises.
func score(ch rubric.Chapter, cr chapterResults) (points, passed int) {
	for _, ex := range ch.Exercises {
		if cr.Results[ex.ID].Pass {
			points += ex.Points
			passed++
		}
	}
	return points, passed
}

// bar draws points out of most as a bar of width cells.
func bar(points, most, width int) string {
	full := 0
	if most > 0 {
		full = (points*width + most/2) / most
	}
	if points > 0 && full == 0 {
		full = 1
	}
	return strings.Repeat("█", full) + strings.Repeat("░", width-full)
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// nextExercise is the first exercise, in course order, that does not pass.
func (c *course) nextExercise(all map[string]chapterResults) (rubric.Chapter, rubric.Exercise, bool) {
	for _, ch := range c.rb.Chapters {
		cr, ran := all[ch.ID]
		if !ran {
			continue
		}
		for _, ex := range ch.Exercises {
			if !cr.Results[ex.ID].Pass {
				return ch, ex, true
			}
		}
	}
	return rubric.Chapter{}, rubric.Exercise{}, false
}

// nextLine is status's last line: the next exercise, where to start, and the
// command that checks it.
func (c *course) nextLine(all map[string]chapterResults) string {
	ch, ex, ok := c.nextExercise(all)
	if !ok {
		return "next: nothing — every exercise passes here. make grade is the official count."
	}
	return fmt.Sprintf("next: %s — %s — %s", ex.ID, c.startingPoint(ch, ex), testCommand(ch, ex))
}

// startingPoint is the first TODO of the exercise, or its lesson when it has
// no code of its own.
func (c *course) startingPoint(ch rubric.Chapter, ex rubric.Exercise) string {
	if todos, err := c.todos(ch, ex); err == nil && len(todos) > 0 {
		return todos[0].where()
	}
	return "chapters/" + ch.ID + "/README.md"
}

// testCommand runs one exercise the way the lessons say, with full paths in
// failures so that editors and terminals can jump to them.
func testCommand(ch rubric.Chapter, ex rubric.Exercise) string {
	return fmt.Sprintf("go test -fullpath ./chapters/%s/... -run %s", ch.ID, ex.RunPattern())
}

// next prints the next unsolved exercise: the lesson's paragraph about it,
// its TODOs, what its last run said, and where to get a hint.
func (c *course) next(ctx context.Context, w io.Writer) error {
	all, err := c.results(ctx)
	if err != nil {
		return err
	}
	ch, ex, ok := c.nextExercise(all)
	if !ok {
		fmt.Fprintln(w, "Every exercise passes here. make grade is the official count; the lessons' Experiments sections are next.")
		return nil
	}
	fmt.Fprintf(w, "next: %s %s (%d points), chapter %s — %s\n", ex.ID, ex.Title, ex.Points, ch.ID, ch.Title)
	fmt.Fprintf(w, "check it with: %s\n", testCommand(ch, ex))
	if lesson := c.lessonExcerpt(ch, ex); lesson != nil {
		fmt.Fprintf(w, "\nFrom the lesson (chapters/%s/README.md):\n", ch.ID)
		for _, l := range lesson {
			fmt.Fprintln(w, "  "+l)
		}
	} else {
		fmt.Fprintf(w, "\nThe lesson, chapters/%s/README.md, explains it (its Exercises section).\n", ch.ID)
	}
	todos, err := c.todos(ch, ex)
	if err != nil {
		return err
	}
	if len(todos) == 0 {
		fmt.Fprintf(w, "\nExercise %s has no TODO of its own: it passes when the code of the exercises before it is right together.\n", ex.ID)
	} else {
		fmt.Fprintf(w, "\nThe TODOs (%d):\n", len(todos))
		for _, t := range todos {
			fmt.Fprintf(w, "  %s\n", t.where())
			for _, l := range t.Text {
				fmt.Fprintf(w, "      %s\n", l)
			}
		}
	}
	if r := all[ch.ID].Results[ex.ID]; r.Cause != "" {
		fmt.Fprintf(w, "\nLast run: %s\n", r.Cause)
		for i, l := range r.Output {
			if i == 12 {
				fmt.Fprintf(w, "  … (run the command above for the rest)\n")
				break
			}
			fmt.Fprintln(w, "  "+l)
		}
	}
	fmt.Fprintf(w, "\nStuck? make hint EX=%s shows one hint more each time (%s).\n", ex.ID, strings.Join(rubric.HintKinds, ", then "))
	return nil
}
