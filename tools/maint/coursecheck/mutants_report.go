// The mutant run's report: one row per mutant, then the kill rate per
// chapter and exercise, and what to do about a survivor.

package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"serverlab/tools/internal/grade"
	"serverlab/tools/internal/rubric"
)

// writeMutantReport prints the table, the kill rates and the exercises with
// fewer than min mutants in the whole catalogue; it returns how many mutants
// survived or are invalid.
func writeMutantReport(w io.Writer, results []mutantResult, catalogue []mutant, chapters []rubric.Chapter, min int, took time.Duration) int {
	nameW := len("name")
	for _, r := range results {
		nameW = max(nameW, len(r.name))
	}
	fmt.Fprintf(w, "  %-3s %-5s %-*s %-8s %-12s %6s  %s\n", "ch", "ex", nameW, "name", "verdict", "cause", "time", "why")
	bad := 0
	type tally struct{ killed, graded int }
	byChapter, byExercise := map[string]*tally{}, map[string]*tally{}
	var order []string
	for _, r := range results {
		fmt.Fprintf(w, "  %-3s %-5s %-*s %-8s %-12s %6s  %s\n", r.chapter, r.exercise, nameW, r.name, r.verdict, r.cause, grade.Seconds(r.duration), r.why)
		if r.verdict != verdictKilled {
			bad++
			fmt.Fprintf(w, "%s\n", indent(r.file+": "+r.detail, "        "))
		}
		for _, key := range []string{r.chapter, r.chapter + " " + r.exercise} {
			m := byExercise
			if key == r.chapter {
				m = byChapter
			}
			t := m[key]
			if t == nil {
				t = &tally{}
				m[key] = t
				order = append(order, key)
			}
			t.graded++
			if r.verdict == verdictKilled {
				t.killed++
			}
		}
	}
	fmt.Fprintf(w, "kill rate (%d graded in %s):\n", len(results), grade.Seconds(took))
	for _, key := range order {
		t, isChapter := byChapter[key]
		label := "  chapter " + key
		if !isChapter {
			t, label = byExercise[key], "    "+strings.Fields(key)[1]
		}
		fmt.Fprintf(w, "%-16s %3d/%-3d %3.0f%%\n", label, t.killed, t.graded, 100*float64(t.killed)/float64(t.graded))
	}
	if min > 0 {
		count := map[string]int{}
		for _, m := range catalogue {
			count[m.chapter+" "+m.exercise]++
		}
		var short []string
		for _, ch := range chapters {
			for _, ex := range ch.Exercises {
				if n := count[ch.ID+" "+ex.ID]; n < min {
					short = append(short, fmt.Sprintf("%s (%d)", ex.ID, n))
				}
			}
		}
		if len(short) > 0 {
			fmt.Fprintf(w, "warning: %d exercise(s) have fewer than %d mutants: %s\n", len(short), min, strings.Join(short, ", "))
		}
	}
	return bad
}
