// The mechanical mutation run's report: one row per chapter, then every
// survivor with its key (for equivalent.txt) and the line it changes.

package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"serverlab/tools/internal/grade"
)

// mutateTally counts one chapter's verdicts.
type mutateTally struct {
	total, notCompiled, killed, equivalent, survived, notRun int
}

// score is killed / (total − equivalent − not compiled − not run): the share
// of the mutants that say something about the suite that it noticed.
func (t mutateTally) score() string {
	n := t.total - t.equivalent - t.notCompiled - t.notRun
	if n == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f %%", 100*float64(t.killed)/float64(n))
}

// writeMutateReport prints the per-chapter table (Markdown, so that it can
// go into tools/maint/mutants/REPORT.md as is) and the survivors; it
// returns how many survived that open.txt does not list.
func writeMutateReport(w io.Writer, results []autoResult, c config, took time.Duration) int {
	tallies := map[string]*mutateTally{}
	var order []string
	var survivors []autoResult
	for _, r := range results {
		t := tallies[r.chapter]
		if t == nil {
			t = &mutateTally{}
			tallies[r.chapter] = t
			order = append(order, r.chapter)
		}
		t.total++
		switch r.verdict {
		case verdictNotCompiled:
			t.notCompiled++
		case verdictKilled:
			t.killed++
		case verdictEquivalent:
			t.equivalent++
		case verdictSurvived, verdictOpen:
			t.survived++
			survivors = append(survivors, r)
		default:
			t.notRun++
		}
	}
	fmt.Fprintf(w, "\n%s, load average %s, %s, -j %d\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"), loadAverage(), grade.Seconds(took), c.Jobs)
	fmt.Fprintln(w, "| chapter | mutants | not compiled | killed | equivalent | survived | not run | score |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, ch := range order {
		t := tallies[ch]
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d | %d | %s |\n", ch, t.total, t.notCompiled, t.killed, t.equivalent, t.survived, t.notRun, t.score())
	}
	if len(survivors) > 0 {
		fmt.Fprintf(w, "\nsurvivors (%d): kill each with a check, or add its key to %s with a reason\n", len(survivors), equivalentFile)
		for _, r := range survivors {
			fmt.Fprintf(w, "  %s  [%s] %s:%d  %s  →  %s", r.key, strings.Join(r.exercises, ","), r.file, r.line, r.before, orRemoved(r.after))
			if r.verdict == verdictOpen {
				fmt.Fprintf(w, "  (open: %s)", r.cause)
			}
			fmt.Fprintln(w)
		}
	}
	fresh := 0
	for _, r := range survivors {
		if r.verdict == verdictSurvived {
			fresh++
		}
	}
	return fresh
}

func orRemoved(s string) string {
	if s == "" {
		return "(removed)"
	}
	return s
}

// loadAverage is /proc/loadavg's first three fields, or "?".
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(raw)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "? (" + runtime.GOOS + ")"
}
