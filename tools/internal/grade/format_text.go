package grade

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// Lines of a lost exercise's message shown under it in the table: the failed
// check's own message first (see failureFirst), the rest one go test away,
// and the footer says how.
const textMessageLines = 6

// writeText writes the table people read: per chapter, one row per exercise
// (id, title, points, cause or "passed", time) with the start of each lost
// exercise's message under it, the chapter's subtotal, then the total. In a
// report of several chapters, one the student has not started is one line.
func writeText(w io.Writer, rep *Report) error {
	var b strings.Builder
	collapse := len(rep.Chapters) > 1
	prevShort := false
	for i, ch := range rep.Chapters {
		short := collapse && notStarted(ch)
		if i > 0 && !(short && prevShort) {
			b.WriteByte('\n')
		}
		if short {
			fmt.Fprintf(&b, "Chapter %s · %s  %s  not started — %s/README.md\n", ch.ID, ch.Title, points(ch.Points, ch.Max), ch.Dir)
		} else {
			writeTextChapter(&b, ch)
		}
		prevShort = short
	}
	fmt.Fprintf(&b, "\nTotal: %d/%d points (%s, %s)\n", rep.Points, rep.Max, rep.Target, rep.Duration)
	for _, n := range rep.Notes {
		b.WriteString("  " + n + "\n")
	}
	writeTextFooter(&b, rep)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeTextChapter(b *strings.Builder, ch ChapterResult) {
	fmt.Fprintf(b, "Chapter %s · %s (%s%s)\n", ch.ID, ch.Title, ch.Dir, trackNote(ch.Track))
	if ch.BuildError != "" {
		b.WriteString("  does not build, so no exercise can pass:\n")
		writeIndented(b, ch.BuildError, "    ", maxBuildLines+1)
	}
	once := chapterOnce(ch)
	if len(once) > 0 {
		b.WriteString("  screening found (the exercises marked integrity below lose their points for it):\n")
		for _, h := range once {
			b.WriteString("    " + h + "\n")
		}
	}
	var idW, titleW, pointsW, statusW int
	for _, ex := range ch.Exercises {
		idW = max(idW, width(ex.ID))
		titleW = max(titleW, width(ex.Title))
		pointsW = max(pointsW, width(points(ex.Points, ex.Max)))
		statusW = max(statusW, width(ex.Status()))
	}
	for _, ex := range ch.Exercises {
		took := ex.Duration.String()
		if ex.Cause == CauseBuildError {
			took = "" // it never ran
		}
		row := fmt.Sprintf("  %s  %s  %s  %s  %s",
			pad(ex.ID, idW), pad(ex.Title, titleW), padLeft(points(ex.Points, ex.Max), pointsW),
			pad(ex.Status(), statusW), took)
		b.WriteString(strings.TrimRight(row, " ") + "\n")
		if !ex.Passed && ch.BuildError == "" && ex.Message != "" && !(ex.Cause == CauseIntegrity && slices.Contains(once, ex.Message)) {
			writeIndented(b, ex.Message, strings.Repeat(" ", 2+idW+2), textMessageLines)
		}
	}
	fmt.Fprintf(b, "  %s  %s  %s\n", pad("", idW), pad("subtotal", titleW), padLeft(points(ch.Points, ch.Max), pointsW))
}

// chapterOnce are the lines the text table prints once for a chapter,
// above its exercises: every screening line when there are several, and any
// integrity message that more than one exercise lost its points with (a
// refusal of the gate costs all of them, chapter 05's eighteen). An
// exercise whose message is among them shows only its cause, integrity:
// one line per chapter for a cause its exercises share, not one per
// exercise. The other formats keep every exercise's message whole.
func chapterOnce(ch ChapterResult) []string {
	var once []string
	if len(ch.Integrity) > 1 {
		once = slices.Clone(ch.Integrity)
	}
	count := map[string]int{}
	for _, ex := range ch.Exercises {
		if ex.Cause == CauseIntegrity && ex.Message != "" {
			count[ex.Message]++
		}
	}
	for _, ex := range ch.Exercises {
		if count[ex.Message] > 1 && !slices.Contains(once, ex.Message) {
			once = append(once, ex.Message)
		}
	}
	return once
}

// notStarted says whether a chapter looks as the starter does: it builds
// and every exercise failed cleanly (the cause an
// untouched stub gives). Its messages are the stubs' "not implemented",
// which the lesson says already.
func notStarted(ch ChapterResult) bool {
	if ch.BuildError != "" || ch.Points > 0 || len(ch.Exercises) == 0 {
		return false
	}
	for _, ex := range ch.Exercises {
		if ex.Passed || ex.Cause != CauseFailed {
			return false
		}
	}
	return true
}

// writeTextFooter tells the reader what to do next: how to see a lost
// exercise in full, or, for an untouched checkout, how to begin.
func writeTextFooter(b *strings.Builder, rep *Report) {
	var firstLost *ExerciseResult
	var firstLostCh ChapterResult
	allFailed := true
	rep.Exercises(func(ch ChapterResult, ex ExerciseResult) {
		if ex.Passed {
			allFailed = false
			return
		}
		if ex.Cause != CauseFailed {
			allFailed = false
		}
		if firstLost == nil && ex.Cause != CauseBuildError {
			firstLost, firstLostCh = &ex, ch
		}
	})
	if rep.Points == 0 && allFailed && len(rep.Chapters) > 0 && len(rep.Chapters[0].Exercises) > 0 {
		ch := rep.Chapters[0]
		ex := ch.Exercises[0]
		fmt.Fprintf(b, "\nNothing passes yet, and nothing crashes: a clean start. To begin, read %s/README.md,\n", ch.Dir)
		fmt.Fprintf(b, "fill in the TODO(ex %s) stub, and run:\n    go test ./%s/... -run %s\n", ex.ID, ch.Dir, ex.Pattern)
		return
	}
	if firstLost != nil {
		fmt.Fprintf(b, "\nTo see an exercise's full output, run it alone, e.g.:\n    %s -v\n", firstLost.RunCommand(firstLostCh))
	}
}

// writeIndented writes the first n lines of msg, each after indent, and says
// how many it left out.
func writeIndented(b *strings.Builder, msg, indent string, n int) {
	lines := strings.Split(strings.TrimRight(msg, "\n"), "\n")
	for i, l := range lines {
		if i == n {
			b.WriteString(indent + moreLines(len(lines)-n) + "\n")
			break
		}
		b.WriteString(indent + l + "\n")
	}
}

func points(got, max int) string { return fmt.Sprintf("%d/%d", got, max) }

func width(s string) int { return utf8.RuneCountInString(s) }

func pad(s string, w int) string { return s + strings.Repeat(" ", max(w-width(s), 0)) }

func padLeft(s string, w int) string { return strings.Repeat(" ", max(w-width(s), 0)) + s }
