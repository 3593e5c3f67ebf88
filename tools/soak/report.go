//go:build linux

package main

import (
	"fmt"
	"strings"
	"time"
)

// markdown is the report: a table, one line per server, and what went wrong.
func markdown(results []result, d time.Duration, nofile uint64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| server | crashed | exit | exchanges (errors) | p50 | p99 (goal) | peak RSS (bound) | lost acked | verdict |\n")
	fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|---|\n")
	var notes []string
	for _, r := range results {
		if r.setupErr != "" {
			fmt.Fprintf(&b, "| %s | – | – | – | – | – | – | – | not run |\n", r.name)
			notes = append(notes, fmt.Sprintf("- %s: not run: %s", r.name, r.setupErr))
			continue
		}
		verdict := "ok"
		if !r.ok() {
			verdict = "**FAIL**"
		}
		rss := fmt.Sprintf("%.1f MiB (%d)", r.rssMiB, r.bound)
		if r.crashed {
			rss = fmt.Sprintf("– (%d)", r.bound) // the process was gone before it could be read
		}
		fmt.Fprintf(&b, "| %s | %v | %s | %d (%d) | %v | %v (%v) | %s | %d | %s |\n",
			r.name, r.crashed, r.exit, r.n, r.errors, round(r.p50), round(r.p99), r.goal, rss, r.lost, verdict)
		note := fmt.Sprintf("- %s: p99 is for %s; RSS bound: %s. %s", r.name, r.goalWhy, r.rssWhy, r.attackStats)
		if r.errors > 0 {
			note += fmt.Sprintf(" Last client error: %s.", r.lastErr)
		}
		if r.lostWhy != "" {
			note += " " + r.lostWhy + "."
		}
		notes = append(notes, note)
	}
	fmt.Fprintf(&b, "\n%v of hostile load per server, servers' RLIMIT_NOFILE %d.\n\n%s\n", d, nofile, strings.Join(notes, "\n"))
	return b.String()
}

func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	default:
		return d.Round(time.Microsecond)
	}
}
