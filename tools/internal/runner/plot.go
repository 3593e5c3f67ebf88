package runner

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"

	"github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Plot is a line plot of cell medians: one line per server (and per knob
// value, when there are several and X is the client count) and per Key.
type Plot struct {
	File  string   // e.g. "cpu_vs_clients.png"
	Title string   //
	Y     string   // the y axis label, with its unit: "CPU (% of one core)"
	Keys  []string // the values to draw, e.g. "rss_kib", "pss_kib"
	// Names are the legend's names of the Keys ("RSS", "PSS"); empty: the
	// keys. With a single key and no Names the legend shows servers only.
	Names []string
	Scale float64 // multiplies every value, e.g. 1.0/1024 for KiB → MiB; 0 means 1
	// X is what the x axis shows: "clients" (the default) or "knob" (the
	// knob's values must then be numbers).
	X    string
	LogX bool
	LogY bool
	// Bars draws grouped bars (one group per x value, a bar per line)
	// instead of lines: for values that are often equal, such as 100 %,
	// where lines would hide each other.
	Bars bool
}

// Draw draws the plot of r's medians as a PNG file at path.
func (pl Plot) Draw(path string, r *Results) error {
	p := plot.New()
	p.Title.Text = pl.Title
	p.X.Label.Text = "concurrent clients"
	if pl.X == "knob" {
		p.X.Label.Text = r.KnobName
	}
	p.Y.Label.Text = pl.Y
	if pl.LogX {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	}
	if pl.LogY {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	}
	p.Legend.Top, p.Legend.Left = true, true
	scale := pl.Scale
	if scale == 0 {
		scale = 1
	}
	if pl.Bars {
		return pl.drawBars(p, path, r, scale)
	}
	n := 0
	for _, line := range pl.lines(r) {
		var pts plotter.XYs
		for _, c := range line.cells {
			v, ok := r.Median(line.server, c, line.key)
			x, xok := pl.x(c)
			if ok == 0 || !xok || math.IsNaN(v) {
				continue
			}
			pts = append(pts, plotter.XY{X: x, Y: v * scale})
		}
		if len(pts) == 0 {
			continue
		}
		l, s, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		l.Color, s.Color = plotutil.Color(line.serverIndex), plotutil.Color(line.serverIndex)
		l.Dashes, s.Shape = plotutil.Dashes(line.keyIndex), plotutil.Shape(line.keyIndex)
		l.Width = vg.Points(1.5)
		p.Add(l, s)
		p.Legend.Add(line.name, l, s)
		n++
	}
	if n == 0 {
		return fmt.Errorf("no data for %v", pl.Keys)
	}
	if !pl.LogY {
		p.Y.Min = 0 // so that the lines' heights compare
	}
	makeRoomForLegend(p, n, pl.LogY)
	return save(p, path, 8*vg.Inch, 4.5*vg.Inch)
}

// drawBars draws the lines as groups of bars at the x values, in order.
func (pl Plot) drawBars(p *plot.Plot, path string, r *Results, scale float64) error {
	var xs []float64
	for _, c := range r.Cells() {
		if x, ok := pl.x(c); ok && !slices.Contains(xs, x) {
			xs = append(xs, x)
		}
	}
	lines := pl.lines(r)
	width := vg.Points(min(60/float64(len(lines)), 14))
	for i, line := range lines {
		values := make(plotter.Values, len(xs))
		for _, c := range line.cells {
			if x, ok := pl.x(c); ok {
				if v, n := r.Median(line.server, c, line.key); n > 0 {
					values[slices.Index(xs, x)] = v * scale
				}
			}
		}
		bars, err := plotter.NewBarChart(values, width)
		if err != nil {
			return err
		}
		bars.Color = plotutil.Color(line.serverIndex)
		bars.LineStyle.Width = 0
		bars.Offset = width * vg.Length(float64(i)-float64(len(lines)-1)/2)
		p.Add(bars)
		p.Legend.Add(line.name, bars)
	}
	labels := make([]string, len(xs))
	for i, x := range xs {
		labels[i] = strconv.FormatFloat(x, 'g', -1, 64)
	}
	p.NominalX(labels...)
	p.Y.Min = 0
	makeRoomForLegend(p, len(lines), false)
	return save(p, path, 8*vg.Inch, 4.5*vg.Inch)
}

// line is one line of a Plot.
type line struct {
	name                  string
	server                string
	serverIndex, keyIndex int
	key                   string
	cells                 []Cell
}

func (pl Plot) lines(r *Results) []line {
	var knobs []string // one line per knob value, or one line over all knobs
	for _, c := range r.Cells() {
		if pl.X != "knob" && !slices.Contains(knobs, c.Knob) {
			knobs = append(knobs, c.Knob)
		}
	}
	if pl.X == "knob" || len(knobs) == 0 {
		knobs = []string{""}
	}
	var out []line
	for si, s := range r.Servers {
		for _, k := range knobs {
			for ki, key := range pl.Keys {
				name := s
				if len(knobs) > 1 {
					name += " " + r.KnobName + "=" + k
				}
				if len(pl.Names) > ki {
					name += " " + pl.Names[ki]
				} else if len(pl.Keys) > 1 {
					name += " " + key
				}
				var cells []Cell
				for _, c := range r.Cells() {
					if pl.X == "knob" || len(knobs) == 1 || c.Knob == k {
						cells = append(cells, c)
					}
				}
				out = append(out, line{name: name, server: s, serverIndex: si, keyIndex: ki, key: key, cells: cells})
			}
		}
	}
	return out
}

// x is a cell's position on the x axis.
func (pl Plot) x(c Cell) (float64, bool) {
	if pl.X == "knob" {
		v, err := strconv.ParseFloat(c.Knob, 64)
		return v, err == nil
	}
	return float64(c.Clients), true
}

// Dist is one distribution of a DistributionPlot.
type Dist struct {
	Name string
	Hist *hdrhistogram.Histogram // microseconds, as load.Result.Latency
}

// DistributionPlot draws latency distributions side by side in one PNG: on
// the left a histogram (share of the samples per bin, one step line per
// distribution), on the right a box plot per distribution (median, quartiles,
// whiskers at 1.5 IQR; the box plot is drawn from 1,000 evenly spaced
// quantiles of the HDR histogram, which have the same quartiles). Both
// use log scales: latencies span decades.
func DistributionPlot(path, title string, dists []Dist) error {
	var live []Dist
	for _, d := range dists {
		if d.Hist != nil && d.Hist.TotalCount() > 0 {
			live = append(live, d)
		}
	}
	if len(live) == 0 {
		return fmt.Errorf("%s: no samples to plot", path)
	}
	hist, err := histogramPlot(title, live)
	if err != nil {
		return err
	}
	box, err := boxPlot(live)
	if err != nil {
		return err
	}
	width, height := 12*vg.Inch, 4.5*vg.Inch
	img := vgimg.New(width, height)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Millimeter * 6, PadTop: vg.Millimeter * 2,
		PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	canvases := plot.Align([][]*plot.Plot{{hist, box}}, tiles, dc)
	hist.Draw(canvases[0][0])
	box.Draw(canvases[0][1])
	return writePNG(img, path)
}

// histBins is the histogram's number of bins, log-spaced from the fastest
// delivery to the slowest (p99.9): latencies span decades, and on a linear
// axis all but the tail would fall into the first bin.
const histBins = 30

func histogramPlot(title string, dists []Dist) (*plot.Plot, error) {
	lo, hi := math.Inf(1), 0.0
	for _, d := range dists {
		lo = min(lo, float64(max(d.Hist.Min(), 1))/1000)
		hi = max(hi, float64(d.Hist.ValueAtQuantile(99.9))/1000)
	}
	hi = max(hi, lo*10)
	step := math.Log(hi/lo) / histBins
	bin := func(ms float64) int {
		return min(max(int(math.Log(ms/lo)/step), 0), histBins-1)
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "delivery time (ms, log scale); the last bin holds everything slower"
	p.Y.Label.Text = "share of deliveries (%)"
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	p.Legend.Top = true
	for i, d := range dists {
		shares := make([]float64, histBins)
		for _, bar := range d.Hist.Distribution() {
			if bar.Count > 0 {
				shares[bin(float64(bar.From+bar.To)/2/1000)] += float64(bar.Count)
			}
		}
		pts := make(plotter.XYs, histBins+1)
		for b := range histBins + 1 {
			pts[b].X = lo * math.Exp(float64(b)*step)
			pts[b].Y = 100 * shares[min(b, histBins-1)] / float64(d.Hist.TotalCount())
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		l.StepStyle = plotter.PostStep
		l.Color, l.Width, l.Dashes = plotutil.Color(i), vg.Points(1.5), plotutil.Dashes(i)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s (%d deliveries)", d.Name, d.Hist.TotalCount()), l)
	}
	p.Y.Min = 0
	makeRoomForLegend(p, len(dists), false)
	return p, nil
}

func boxPlot(dists []Dist) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Delivery time per server"
	p.Y.Label.Text = "delivery time (ms, log scale)"
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	names := make([]string, len(dists))
	for i, d := range dists {
		names[i] = d.Name
		b, err := plotter.NewBoxPlot(vg.Points(30), float64(i), quantileSample(d.Hist, 1000))
		if err != nil {
			return nil, err
		}
		b.FillColor = plotutil.Color(i)
		p.Add(b)
	}
	p.NominalX(names...)
	return p, nil
}

// quantileSample returns n values, in ms, at evenly spaced quantiles of h:
// a sample with h's distribution, for plotters that want values.
func quantileSample(h *hdrhistogram.Histogram, n int) plotter.Values {
	vs := make(plotter.Values, n)
	for i := range vs {
		q := 100 * (float64(i) + 0.5) / float64(n)
		vs[i] = float64(max(h.ValueAtQuantile(q), 1)) / 1000 // ≥ 1 µs: a log axis has no 0
	}
	return vs
}

// makeRoomForLegend raises the top of the y axis so that the data stay
// below a legend of n entries in the top corner, which would hide them.
func makeRoomForLegend(p *plot.Plot, n int, logScale bool) {
	share := min(0.05+0.045*float64(n), 0.6) // of the height, for the legend
	if logScale && p.Y.Min > 0 {
		p.Y.Max = p.Y.Min * math.Pow(p.Y.Max/p.Y.Min, 1/(1-share))
		return
	}
	p.Y.Max = p.Y.Min + (p.Y.Max-p.Y.Min)/(1-share)
}

func save(p *plot.Plot, path string, w, h vg.Length) error {
	img := vgimg.New(w, h)
	p.Draw(draw.New(img))
	return writePNG(img, path)
}

func writePNG(img *vgimg.Canvas, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
