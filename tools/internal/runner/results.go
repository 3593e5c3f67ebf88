package runner

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Row is one trial's result, one line of results.csv.
type Row struct {
	Experiment string
	Server     string
	Clients    int
	Knob       string
	Round      int
	Values     map[string]float64
	Err        string // why the trial failed; "" if it did not
}

func (r Row) summary() string {
	if r.Err != "" {
		return "FAILED: " + r.Err
	}
	var parts []string
	for _, k := range []string{"throughput_rps", "p50_ms", "p99_ms", "cpu_pct", "rss_kib"} {
		if v, ok := r.Values[k]; ok {
			parts = append(parts, k+"="+format(v))
		}
	}
	return strings.Join(parts, " ")
}

// Results are an experiment's rows, in the order they ran.
type Results struct {
	Name     string
	Command  string
	KnobName string
	Baseline string
	Servers  []string // in the experiment's order
	Rows     []Row
	Table    []Column
	Plots    []Plot

	latency map[cellKey]*hdrhistogram.Histogram
}

// cellKey names one cell of one server.
type cellKey struct {
	server string
	Cell
}

func newResults(e *Experiment) *Results {
	r := &Results{Name: e.Name, Command: e.Command, KnobName: e.KnobName, Baseline: e.Baseline,
		Table: e.Table, Plots: e.Plots, latency: map[cellKey]*hdrhistogram.Histogram{}}
	for _, s := range e.Servers {
		r.Servers = append(r.Servers, s.Name)
	}
	if r.Baseline == "" {
		r.Baseline = r.Servers[0]
	}
	return r
}

func (r *Results) add(row Row, hist *hdrhistogram.Histogram) {
	r.Rows = append(r.Rows, row)
	if hist == nil {
		return
	}
	k := cellKey{row.Server, Cell{row.Clients, row.Knob}}
	if r.latency[k] == nil {
		r.latency[k] = hdrhistogram.New(hist.LowestTrackableValue(), hist.HighestTrackableValue(), int(hist.SignificantFigures()))
	}
	r.latency[k].Merge(hist)
}

// Latency returns the merged latency histogram (µs) of one server's cell,
// over its successful rounds; nil if its trials reported none.
func (r *Results) Latency(server string, c Cell) *hdrhistogram.Histogram {
	return r.latency[cellKey{server, c}]
}

// Cells returns the cells in the order they ran.
func (r *Results) Cells() []Cell {
	var cells []Cell
	for _, row := range r.Rows {
		c := Cell{row.Clients, row.Knob}
		if !slices.Contains(cells, c) {
			cells = append(cells, c)
		}
	}
	return cells
}

// Median returns the median of value key over server's successful trials in
// cell c, and how many trials it is the median of (0: none, and NaN).
func (r *Results) Median(server string, c Cell, key string) (float64, int) {
	var xs []float64
	for _, row := range r.Rows {
		if row.Err == "" && row.Server == server && row.Clients == c.Clients && row.Knob == c.Knob {
			if v, ok := row.Values[key]; ok {
				xs = append(xs, v)
			}
		}
	}
	return Median(xs), len(xs)
}

// Ratio returns server's median of key in cell c divided by the baseline
// server's, NaN if either is missing or the baseline's is 0.
func (r *Results) Ratio(server string, c Cell, key string) float64 {
	v, n := r.Median(server, c, key)
	base, nb := r.Median(r.Baseline, c, key)
	if n == 0 || nb == 0 || base == 0 {
		return math.NaN()
	}
	return v / base
}

// Median returns the median of xs (the mean of the middle two for an even
// count), NaN for none. It does not modify xs.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	mid := len(s) / 2
	if len(s)%2 == 1 {
		return s[mid]
	}
	return (s[mid-1] + s[mid]) / 2
}

// keys lists every value name that occurs in the rows, sorted.
func (r *Results) keys() []string {
	set := map[string]bool{}
	for _, row := range r.Rows {
		for k := range row.Values {
			set[k] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

func (r *Results) knobColumn() string {
	if r.KnobName == "" {
		return "knob"
	}
	return r.KnobName
}

// WriteCSV writes results.csv's rows for these results: experiment, server,
// clients, the knob, round, error, then every value (an empty cell where a
// trial has no such value). Several experiments are separated by a blank
// line, each with its own header: their values differ.
func WriteCSV(w io.Writer, results ...*Results) error {
	cw := csv.NewWriter(w)
	for i, r := range results {
		keys := r.keys()
		if i > 0 {
			cw.Write(nil) // a blank line between experiments: their columns differ
		}
		cw.Write(append([]string{"experiment", "server", "clients", r.knobColumn(), "round", "error"}, keys...))
		for _, row := range r.Rows {
			rec := []string{row.Experiment, row.Server, strconv.Itoa(row.Clients), row.Knob, strconv.Itoa(row.Round), row.Err}
			for _, k := range keys {
				if v, ok := row.Values[k]; ok {
					rec = append(rec, strconv.FormatFloat(v, 'g', 6, 64))
				} else {
					rec = append(rec, "")
				}
			}
			cw.Write(rec)
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteMarkdown writes the table: one line per cell and server with the
// medians of the Table columns and, for a Ratio column, the ratio to the
// baseline server in the same cell ("×ch02").
func (r *Results) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s\n\n", r.Name)
	if r.Command != "" {
		fmt.Fprintf(&b, "Command: `%s`\n\n", r.Command)
	}
	header := []string{"server", "clients"}
	align := []string{"---", "---:"}
	if r.KnobName != "" {
		header, align = append(header, r.KnobName), append(align, "---:")
	}
	header, align = append(header, "trials"), append(align, "---:")
	for _, c := range r.Table {
		header, align = append(header, c.Title), append(align, "---:")
		if c.Ratio {
			header, align = append(header, "× "+r.Baseline), append(align, "---:")
		}
	}
	fmt.Fprintf(&b, "| %s |\n|%s|\n", strings.Join(header, " | "), strings.Join(align, "|"))
	for _, c := range r.Cells() {
		for _, s := range r.Servers {
			cols := []string{s, strconv.Itoa(c.Clients)}
			if r.KnobName != "" {
				cols = append(cols, c.Knob)
			}
			cols = append(cols, r.trials(s, c))
			for _, col := range r.Table {
				v, n := r.Median(s, c, col.Key)
				cols = append(cols, cell(v, n > 0))
				if col.Ratio {
					ratio := r.Ratio(s, c, col.Key)
					cols = append(cols, ratioCell(ratio))
				}
			}
			fmt.Fprintf(&b, "| %s |\n", strings.Join(cols, " | "))
		}
	}
	failures := r.failures()
	if len(failures) > 0 {
		fmt.Fprintf(&b, "\nFailed trials (left out of the medians):\n\n")
		for _, f := range failures {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// trials says how many of a server's trials in a cell succeeded: "3" or "2/3".
func (r *Results) trials(server string, c Cell) string {
	ok, all := 0, 0
	for _, row := range r.Rows {
		if row.Server == server && row.Clients == c.Clients && row.Knob == c.Knob {
			all++
			if row.Err == "" {
				ok++
			}
		}
	}
	if ok == all {
		return strconv.Itoa(all)
	}
	return fmt.Sprintf("%d/%d", ok, all)
}

func (r *Results) failures() []string {
	var out []string
	for _, row := range r.Rows {
		if row.Err != "" {
			out = append(out, fmt.Sprintf("%s, %d clients%s, round %d: %s",
				row.Server, row.Clients, knobLabel(r.KnobName, row.Knob), row.Round, row.Err))
		}
	}
	return out
}

func ratioCell(r float64) string {
	if math.IsNaN(r) {
		return "–"
	}
	return format(r) + "×"
}

func cell(v float64, ok bool) string {
	if !ok {
		return "–"
	}
	return format(v)
}

// WriteFiles writes the results of one or more experiments into dir:
// results.csv (every trial), results.md (the tables, one per experiment)
// and each experiment's Plots.
func WriteFiles(dir string, results ...*Results) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var csvBuf, md strings.Builder
	if err := WriteCSV(&csvBuf, results...); err != nil {
		return err
	}
	for i, r := range results {
		if i > 0 {
			md.WriteString("\n")
		}
		if err := r.WriteMarkdown(&md); err != nil {
			return err
		}
	}
	err := errors.Join(
		os.WriteFile(filepath.Join(dir, "results.csv"), []byte(csvBuf.String()), 0o644),
		os.WriteFile(filepath.Join(dir, "results.md"), []byte(md.String()), 0o644),
	)
	if err != nil {
		return err
	}
	for _, r := range results {
		for _, p := range r.Plots {
			if err := p.Draw(filepath.Join(dir, p.File), r); err != nil {
				return fmt.Errorf("plot %s: %w", p.File, err)
			}
		}
	}
	return nil
}
