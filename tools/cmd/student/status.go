package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

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
		printRefusals(w, ch, cr)
	}
	fmt.Fprintf(w, "%-3s %-46s %7s\n", "", "total", fmt.Sprintf("%d/%d", total, most))
	if c.ranTests { // what it cost this time, among the notes; cached results cost nothing
		if line := busyLine(loadNow(), took); line != "" {
			fmt.Fprintln(c.log, line)
		}
	}
	fmt.Fprintln(w, c.nextLine(all))
	return nil
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

// nextExercise is the exercise to work on: the first that does not pass in
// the chapter the student edited last (the newest .go file under
// chapters/NN), so that a student who skipped ahead to chapter 07 is not
// sent back to 1.1; when no chapter was edited since it was unpacked (or
// the edits are as old as each other), the first that does not pass in
// course order.
func (c *course) nextExercise(all map[string]chapterResults) (rubric.Chapter, rubric.Exercise, bool) {
	edited := map[string]time.Time{}
	for _, ch := range c.rb.Chapters {
		edited[ch.ID] = newestGo(filepath.Join(c.root, chapterDir(ch.ID)))
	}
	return pickNext(c.rb.Chapters, all, edited)
}

// pickNext is nextExercise's choice, given each chapter's last edit.
func pickNext(chapters []rubric.Chapter, all map[string]chapterResults, edited map[string]time.Time) (rubric.Chapter, rubric.Exercise, bool) {
	var (
		best     rubric.Chapter
		bestEx   rubric.Exercise
		bestTime time.Time
		found    bool
	)
	for _, ch := range chapters { // course order: a later chapter wins only if edited later
		cr, ran := all[ch.ID]
		if !ran {
			continue
		}
		i := slices.IndexFunc(ch.Exercises, func(ex rubric.Exercise) bool { return !cr.Results[ex.ID].Pass })
		if i < 0 {
			continue
		}
		if t := edited[ch.ID]; !found || t.Sub(bestTime) > editSlack {
			best, bestEx, bestTime, found = ch, ch.Exercises[i], t, true
		}
	}
	return best, bestEx, found
}

// isChapterArg says whether a command's argument names a chapter (07, 7)
// rather than an exercise (7.4).
func isChapterArg(arg string) bool {
	return len(arg) > 0 && len(arg) <= 2 && strings.Trim(arg, "0123456789") == ""
}

// editSlack is how much newer a chapter's files must be to count as edited
// later: an unpacked release's files differ by the time unpacking took.
const editSlack = 2 * time.Second

// newestGo is the modification time of the newest .go file in dir and its
// subfolders (zero if none).
func newestGo(dir string) time.Time {
	var newest time.Time
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		if fi, err := d.Info(); err == nil && fi.ModTime().After(newest) {
			newest = fi.ModTime()
		}
		return nil
	})
	return newest
}

// nextLine is status's last line: the next exercise, where to start, and the
// command that checks it.
func (c *course) nextLine(all map[string]chapterResults) string {
	ch, ex, ok := c.nextExercise(all)
	if !ok {
		return "next: nothing — every exercise passes here. make grade is the official count."
	}
	return fmt.Sprintf("next: %s — %s — %s", ex.ID, c.startingPoint(ch, ex), c.testCommand(ch, ex))
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
// failures so that editors and terminals can jump to them, and with -race
// whenever the tools' own runs use it (as the grader does): without it a racy
// solution passes the printed command and then scores 0 in make grade.
func (c *course) testCommand(ch rubric.Chapter, ex rubric.Exercise) string {
	race := ""
	if c.race {
		race = " -race"
	}
	return fmt.Sprintf("go test%s -fullpath ./chapters/%s/... -run %s", race, ch.ID, ex.RunPattern())
}

// next prints the next unsolved exercise: the lesson's paragraph about it,
// its TODOs, what its last run said, and where to get a hint.
//
// With an argument, an exercise (7.4) or a chapter (07), it shows that
// exercise, or the chapter's first that does not pass.
func (c *course) next(ctx context.Context, w io.Writer, arg string) error {
	all, err := c.results(ctx)
	if err != nil {
		return err
	}
	var (
		ch rubric.Chapter
		ex rubric.Exercise
		ok bool
	)
	switch {
	case arg == "":
		ch, ex, ok = c.nextExercise(all)
	case isChapterArg(arg):
		id := fmt.Sprintf("%02s", strings.TrimLeft(arg, "0"))
		for _, chap := range c.rb.Chapters {
			if chap.ID == id {
				ch, ex, ok = pickNext([]rubric.Chapter{chap}, all, nil)
				if !ok {
					fmt.Fprintf(w, "Every exercise of chapter %s passes here. make grade is the official count.\n", id)
					return nil
				}
			}
		}
		if !ok {
			return usagef("unknown chapter %q", arg)
		}
	default:
		if ch, ex, err = c.findExercise(arg); err != nil {
			return err
		}
	}
	if arg == "" && !ok {
		fmt.Fprintln(w, "Every exercise passes here. make grade is the official count; the lessons' Experiments sections are next.")
		return nil
	}
	fmt.Fprintf(w, "next: %s %s (%d points), chapter %s — %s\n", ex.ID, ex.Title, ex.Points, ch.ID, ch.Title)
	fmt.Fprintf(w, "check it with: %s\n", c.testCommand(ch, ex))
	if note := busyBefore(loadNow(), "its tests"); note != "" {
		fmt.Fprintln(w, note)
	}
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
		for _, l := range lastRunLines(r.Output, 12) {
			fmt.Fprintln(w, "  "+l)
		}
	}
	fmt.Fprintf(w, "\nStuck? make hint EX=%s shows one hint more each time (%s).\n", ex.ID, strings.Join(rubric.HintKinds, ", then "))
	return nil
}

// lastRunLines is what next shows of a failed run's output: at most max
// lines, without the --- PASS lines of the subtests that passed, so that the
// failure is on screen rather than twelve passes above a cut (student4 saw
// only passes of a failed 8.1). A note at the end says what was left out.
func lastRunLines(output []string, max int) []string {
	var shown []string
	passed, cut := 0, 0
	for _, l := range output {
		if strings.HasPrefix(strings.TrimSpace(l), "--- PASS") {
			passed++
			continue
		}
		if len(shown) == max {
			cut++
			continue
		}
		shown = append(shown, l)
	}
	switch {
	case cut > 0 && passed > 0:
		shown = append(shown, fmt.Sprintf("… (%d lines more and %d passing subtests: run the command above for the rest)", cut, passed))
	case cut > 0:
		shown = append(shown, fmt.Sprintf("… (%d lines more: run the command above for the rest)", cut))
	case passed > 0:
		shown = append(shown, fmt.Sprintf("(%d subtests passed; not shown)", passed))
	}
	return shown
}
