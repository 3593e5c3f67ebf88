//go:build unix

package main

import (
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// series is one line of a plot: a value per client count, for one server.
type series struct {
	name  string
	value func(result) float64
}

// plotAll draws memory, CPU and latency against the number of clients.
func plotAll(dir string, results []result) error {
	charts := []struct {
		file, title, y string
		lines          []series
	}{
		{"memory.png", "Server memory with every client idle", "MiB", []series{
			{"RSS", func(r result) float64 { return float64(r.idleRSS) / 1024 }},
			{"PSS", func(r result) float64 { return float64(r.idlePSS) / 1024 }},
		}},
		{"rss_per_conn.png", "RSS per idle connection", "KiB", []series{
			{"RSS/conn", result.rssPerConn},
		}},
		{"cpu.png", "Server CPU", "% of one core", []series{
			{"idle", func(r result) float64 { return r.idleCPU }},
			{"active", func(r result) float64 { return r.activeCPU }},
		}},
		{"latency.png", "Delivery latency (send → each receiver)", "ms", []series{
			{"p50", func(r result) float64 { return r.p50 }},
			{"p99", func(r result) float64 { return r.p99 }},
		}},
	}
	for _, c := range charts {
		if err := draw(filepath.Join(dir, c.file), c.title, c.y, c.lines, results); err != nil {
			return err
		}
	}
	return nil
}

func draw(path, title, ylabel string, lines []series, results []result) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "clients"
	p.Y.Label.Text = ylabel
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top = true
	p.Legend.Left = true
	var args []any
	for _, server := range servers(results) {
		for _, l := range lines {
			var pts plotter.XYs
			for _, r := range results {
				if r.server == server {
					pts = append(pts, plotter.XY{X: float64(r.clients), Y: l.value(r)})
				}
			}
			args = append(args, server+" "+l.name, pts)
		}
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return err
	}
	return p.Save(7*vg.Inch, 4*vg.Inch, path)
}

// servers lists the servers in the results, in order of appearance.
func servers(results []result) []string {
	var names []string
	seen := map[string]bool{}
	for _, r := range results {
		if !seen[r.server] {
			seen[r.server] = true
			names = append(names, r.server)
		}
	}
	return names
}
