//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestStockFile(t *testing.T) {
	got := string(stockFile(7))
	if !strings.HasPrefix(got, "1 7 1000\n5 7 5000\n") || strings.Count(got, "\n") != len(stockIDs) {
		t.Errorf("stockFile(7) = %q: want the original's ids in its order, each with 7 shares", got)
	}
}

func TestTableRatios(t *testing.T) {
	servers := []server{{label: "orig"}, {label: "ours"}}
	var samples []sample
	for r, secs := range []float64{1, 2, 3} {
		samples = append(samples,
			sample{round: r, shares: 10, clients: 4, server: "orig", seconds: secs, cpuTicks: 100, queries: 1000},
			sample{round: r, shares: 10, clients: 4, server: "ours", seconds: secs / 2, cpuTicks: 50, queries: 1000})
	}
	md := table(samples, servers, []int{10}, []int{4}, 1000, 3)
	for _, want := range []string{"| 10 | 4 | orig | 500 | 1000.00 | 1.00× | 1.00× |", "| 10 | 4 | ours | 1000 | 500.00 | 2.00× | 0.50× |"} {
		if !strings.Contains(md, want) {
			t.Errorf("table lacks %q:\n%s", want, md)
		}
	}
	dir := t.TempDir()
	if err := plotAll(dir, samples, servers, []int{10}, []int{4}); err != nil {
		t.Fatalf("plotAll: %v", err)
	}
	for _, f := range []string{"throughput.png", "cpu_per_query.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("plotAll wrote no %s: %v", f, err)
		}
	}
	if got := strings.Count(csvOf(samples), "\n"); got != 7 {
		t.Errorf("csv: %d lines, want a header and 6 samples", got)
	}
}
