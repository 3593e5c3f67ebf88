//go:build linux

package main

import (
	"fmt"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// plotAll draws the medians: throughput and CPU per query, one group of bars
// per set-up (shares × clients), one bar per server.
func plotAll(dir string, samples []sample, servers []server, shares, clients []int) error {
	charts := []struct {
		file, title, y string
		value          func(cell) float64
	}{
		{"throughput.png", "Throughput (median of rounds)", "queries/s", func(c cell) float64 { return c.qps }},
		{"cpu_per_query.png", "Server CPU per query (utime+stime, median of rounds)", "µs", func(c cell) float64 { return c.cpu }},
	}
	var labels []string
	for _, sh := range shares {
		for _, n := range clients {
			labels = append(labels, fmt.Sprintf("%dk shares, %d clients", sh/1000, n))
		}
	}
	for _, ch := range charts {
		p := plot.New()
		p.Title.Text = ch.title
		p.Y.Label.Text = ch.y
		p.Legend.Top = true
		w := vg.Points(18)
		for i, s := range servers {
			var vals plotter.Values
			for _, sh := range shares {
				for _, n := range clients {
					vals = append(vals, ch.value(medians(samples, s.label, sh, n)))
				}
			}
			bars, err := plotter.NewBarChart(vals, w)
			if err != nil {
				return err
			}
			bars.Color = plotutil.Color(i)
			bars.LineStyle.Width = 0
			bars.Offset = w * vg.Length(2*i-len(servers)+1) / 2
			p.Add(bars)
			p.Legend.Add(s.label, bars)
		}
		p.NominalX(labels...)
		p.Y.Min, p.Y.Max = 0, 1.3*p.Y.Max // room for the legend above the bars
		if err := p.Save(8*vg.Inch, 4*vg.Inch, filepath.Join(dir, ch.file)); err != nil {
			return err
		}
	}
	return nil
}
