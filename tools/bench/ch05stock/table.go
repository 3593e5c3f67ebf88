//go:build linux

package main

import (
	"fmt"
	"slices"
	"strings"
)

// csvOf is every sample, one line each.
func csvOf(samples []sample) string {
	var b strings.Builder
	b.WriteString("round,shares,clients,server,queries,seconds,qps,cpu_ticks,cpu_us_per_query\n")
	for _, s := range samples {
		fmt.Fprintf(&b, "%d,%d,%d,%s,%d,%.4f,%.0f,%d,%.3f\n", s.round, s.shares, s.clients, s.server,
			s.queries, s.seconds, s.qps(), s.cpuTicks, s.cpuPerQuery())
	}
	return b.String()
}

// median of xs (the mean of the middle two for an even count).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// cell is the medians of one server in one set-up.
type cell struct{ qps, cpu float64 }

func medians(samples []sample, server string, shares, clients int) cell {
	var q, c []float64
	for _, s := range samples {
		if s.server == server && s.shares == shares && s.clients == clients {
			q = append(q, s.qps())
			c = append(c, s.cpuPerQuery())
		}
	}
	return cell{median(q), median(c)}
}

// table is the Markdown table: medians per cell and each server's ratios to
// the first server (the original).
func table(samples []sample, servers []server, shares, clients []int, queries, rounds int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "multiclient_benchmark, %d queries per run, medians of %d interleaved rounds; "+
		"CPU = server utime+stime per query; ratios against %s.\n\n", queries, rounds, servers[0].label)
	b.WriteString("| shares/stock | clients | server | q/s | µs CPU/query | throughput ratio | CPU/query ratio |\n")
	b.WriteString("|---:|---:|---|---:|---:|---:|---:|\n")
	for _, sh := range shares {
		for _, n := range clients {
			base := medians(samples, servers[0].label, sh, n)
			for _, s := range servers {
				m := medians(samples, s.label, sh, n)
				fmt.Fprintf(&b, "| %d | %d | %s | %.0f | %.2f | %.2f× | %.2f× |\n",
					sh, n, s.label, m.qps, m.cpu, m.qps/base.qps, m.cpu/base.cpu)
			}
		}
	}
	return b.String()
}
