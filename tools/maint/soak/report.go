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
	fmt.Fprintf(&b, `# Soak: every server under hostile load

Written by `+"`go run ./tools/maint/soak -duration %v -md docs/soak.md`"+` (the `+"`make soak`"+` target; at most 90 s per
server, so the whole run stays under 10 minutes). A maintainer's tool: it builds the reference servers from
solutions/ and runs each as its own process on 127.0.0.1, with its descriptor limit lowered to %d (prlimit).

For the whole run, at once: an idle flood of limit+256 connections (so Accept fails with EMFILE; dropped ones
are re-opened), 10 slowloris clients (one byte of a plausible request every 500 ms), 20 non-readers (a big file,
pipelined `+"`show`"+` or `+"`HASH`"+`, or a chat login that never reads; they send again every 250 ms), 2
clients sending 64 KiB of random bytes and closing, a connect/reset flood (SO_LINGER 0), and per protocol: 16
broadcasts of 64 KiB a second (chat), `+"`PRIME 18446744073709551557`"+` every 2 s (jobs), and for chatcore
(ch07) 8 password guessers (a wrong password every 20 ms each, reconnecting when closed), an abuser of sizes
(1 MB names, a GetUsers of 100 000 ids, a GetUser whose answer cannot fit in a frame, every 200 ms) and 20
strangers that each begin a 1 MiB frame and send 1 KiB of it a second. Meanwhile 4
well-behaved clients make the everyday exchange and time it: a private message to a second reading client
(chat), a chat message stored and echoed to its sender (chatcore: each user registered with the default
argon2id hash), `+"`HASH a`"+` (jobs), `+"`buy 1 1`"+`/`+"`sell 2 1`"+` (stock: every acknowledged trade must be in
stock.txt after a clean stop), `+"`GET /small.html`"+` of 1 KiB (web, a new connection each time).

A server passes when it did not crash, lost no acknowledged data, its well-behaved clients' p99 met the goal
and its peak RSS (VmHWM) stayed under the bound. The chat bound follows from -max-pending (1 MiB per client);
the others are generous round numbers for servers whose memory does not grow with the load. Other attacks can
be isolated with `+"`-attacks idle,slowloris,...`"+` and `+"`-servers ch06`"+`.

`, d, nofile)
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
