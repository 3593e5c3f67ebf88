package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"serverlab/tools/internal/procs"
	"serverlab/tools/internal/runner"
)

// sffSizes are the files of the sff part, in the order the client asks for
// them: every size from 1 KiB to 8 MiB once, shuffled (by hand, once), so
// that arrival order and size order disagree.
var sffSizes = []int{8 << 20, 1 << 10, 1 << 20, 4 << 10, 4 << 20, 64 << 10, 2 << 20, 16 << 10, 512 << 10, 256 << 10, 32 << 10, 128 << 10}

// Timing of the sff part. The CGI request holds the only worker for
// sffHold; the files arrive sffGap apart after sffSettle, all of them well
// before the worker is free, so that they wait in the buffer together.
const (
	sffHold   = time.Second // spin.cgi?1
	sffSettle = 300 * time.Millisecond
	sffGap    = 20 * time.Millisecond
)

// sffRequest is one request of one sff trial, for the per-request CSV and
// the plots.
type sffRequest struct {
	Policy  string
	Round   int
	Arrival int // 1 = first file asked for
	Size    int // bytes
	Served  int // its place in the server's log of served requests (1 = first)
	// Start is when its first byte arrived at the client, Done its last,
	// both after the first byte of any file (the moment the worker, free of
	// the CGI program, took its first file up). A worker is free again once
	// a file is in the kernel's socket buffers, so a large file can finish
	// after a later small one even under FIFO: Served is the policy's
	// order, Done what the client sees.
	Start, Done time.Duration
}

// runSFF runs the sff part: the chapter's server with one worker, FIFO and
// SFF taking turns.
func runSFF(ctx context.Context, f *flags) (*runner.Results, []sffRequest, error) {
	spin, cleanup, err := spinProgram(ctx, f)
	if err != nil {
		return nil, nil, err
	}
	defer cleanup()
	built, cleanBin, err := build(ctx, []runner.Server{{Name: "wserver", Pkg: "./solutions/06/cmd/wserver"}})
	if err != nil {
		return nil, nil, err
	}
	defer cleanBin()
	// The server logs every request it has served (-v), into the trial's
	// folder (a shell redirects it, then execs the server: same process).
	// With one worker that log is the order of service, exactly, whatever
	// the client's clocks say.
	args := func(policy string) []string {
		return []string{"-c", `exec "$0" -addr 127.0.0.1 -p "$1" -d "$2/www" -t 1 -b 64 -s "$3" -v 2>"$2/server.log"`,
			built[0].Bin, "{port}", "{dir}", policy}
	}
	var (
		mu   sync.Mutex
		reqs []sffRequest
	)
	e := runner.Experiment{
		Name: "web-sff", Command: f.command(), Baseline: "FIFO",
		Servers: []runner.Server{
			{Name: "FIFO", Bin: "/bin/sh", Args: args("FIFO")},
			{Name: "SFF", Bin: "/bin/sh", Args: args("SFF")},
		},
		Clients: []int{len(sffSizes)}, Rounds: f.rounds,
		Setup: func(t *runner.Trial) error { return sffSetup(t, spin) },
		Trial: func(ctx context.Context, t *runner.Trial) (runner.Outcome, error) {
			got, v, err := sffTrial(ctx, t)
			mu.Lock()
			reqs = append(reqs, got...)
			mu.Unlock()
			return runner.Outcome{Values: v}, err
		},
		Table: []runner.Column{
			{Key: "tau_arrival", Title: "service order vs arrival (Kendall τ)"},
			{Key: "tau_size", Title: "service order vs size (Kendall τ)"},
			{Key: "small_ms", Title: "6 smallest: mean ms", Ratio: true},
			{Key: "large_ms", Title: "6 largest: mean ms", Ratio: true},
			{Key: "last_ms", Title: "last done ms"},
		},
	}
	res, err := e.Run(ctx)
	return res, reqs, err
}

// spinProgram returns spin.cgi: the OSTEP original's with -peers, else the
// course's (tests/webtest/cgiprog/spin), built into a temporary folder.
func spinProgram(ctx context.Context, f *flags) (string, func(), error) {
	if bin := f.peer("ostep/concurrency-webserver/src/spin.cgi"); bin != "" {
		return bin, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "bench-spin-")
	if err != nil {
		return "", nil, err
	}
	bin := filepath.Join(dir, "spin.cgi")
	if err := procs.Build(ctx, "", "./tests/webtest/cgiprog/spin", bin, os.Stderr); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("building spin.cgi: %w", err)
	}
	return bin, func() { os.RemoveAll(dir) }, nil
}

// sffSetup writes the trial's files and copies spin.cgi next to them.
func sffSetup(t *runner.Trial, spin string) error {
	www := filepath.Join(t.Dir, "www")
	if err := os.Mkdir(www, 0o755); err != nil {
		return err
	}
	for _, n := range sffSizes {
		b := make([]byte, n)
		rand.Read(b)
		if err := os.WriteFile(filepath.Join(www, fmt.Sprintf("f%d.bin", n)), b, 0o644); err != nil {
			return err
		}
	}
	prog, err := os.ReadFile(spin)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(www, "spin.cgi"), prog, 0o755)
}

// sffTrial holds the one worker with spin.cgi?1, asks for every file while it
// waits, and records when each file has arrived in full.
func sffTrial(ctx context.Context, t *runner.Trial) ([]sffRequest, map[string]float64, error) {
	deadline := time.Now().Add(30 * time.Second)
	blocker := make(chan fetchResult, 1)
	go func() { blocker <- fetch(t.Addr, "/spin.cgi?1", -1, deadline) }()
	select { // the worker is now in the program (a bench, not a test: a pause will do)
	case <-time.After(sffSettle):
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	results := make([]chan fetchResult, len(sffSizes))
	for i, size := range sffSizes {
		results[i] = make(chan fetchResult, 1)
		go func() { results[i] <- fetch(t.Addr, fmt.Sprintf("/f%d.bin", size), size, deadline) }()
		time.Sleep(sffGap) // arrival order: one at a time
	}
	b := <-blocker
	if b.err != nil {
		return nil, nil, fmt.Errorf("spin.cgi: %w", b.err)
	}
	var fetched []fetchResult
	for i, ch := range results {
		r := <-ch
		if r.err != nil {
			return nil, nil, fmt.Errorf("file %d (%d bytes): %w", i+1, sffSizes[i], r.err)
		}
		fetched = append(fetched, r)
	}
	served, err := servedOrder(filepath.Join(t.Dir, "server.log"))
	if err != nil {
		return nil, nil, err
	}
	// Time zero is the first byte of the first file served: the end of the
	// CGI request as the client sees it would do too, but a client thread
	// woken late on a busy machine would shift every file by its delay.
	zero := fetched[0].first
	for _, r := range fetched {
		if r.first.Before(zero) {
			zero = r.first
		}
	}
	var reqs []sffRequest
	for i, r := range fetched {
		uri := fmt.Sprintf("/f%d.bin", sffSizes[i])
		if served[uri] == 0 {
			return nil, nil, fmt.Errorf("%s is not in the server's log of served requests", uri)
		}
		reqs = append(reqs, sffRequest{Policy: t.Server, Round: t.Round, Arrival: i + 1, Size: sffSizes[i], Served: served[uri],
			Start: r.first.Sub(zero), Done: r.done.Sub(zero)})
	}
	v := sffValues(reqs)
	t.Logf("%s: service order vs arrival τ=%.2f, vs size τ=%.2f; the 6 smallest done after %.1f ms on average",
		t.Server, v["tau_arrival"], v["tau_size"], v["small_ms"])
	return reqs, v, nil
}

// servedOrder reads the server's -v log and returns each served URI's place
// in it (1 = served first). The lines are slog's text format:
// `time=… level=DEBUG msg=served uri=/f1024.bin`.
func servedOrder(path string) (map[string]int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("the server's log: %w", err)
	}
	order := map[string]int{}
	for line := range strings.Lines(string(data)) {
		_, rest, ok := strings.Cut(line, " msg=served uri=")
		if !ok {
			continue
		}
		uri, _, _ := strings.Cut(strings.TrimSpace(rest), " ")
		if order[uri] == 0 {
			order[uri] = len(order) + 1
		}
	}
	return order, nil
}

type fetchResult struct {
	first, done time.Time
	err         error
}

// sffValues are a trial's numbers: Kendall's τ between the order in which the
// server served the files (its log) and the arrival order, and between that
// order and the size order (1: exactly that order; -1: exactly reversed), and
// the mean completion time, as the client saw it, of the six smallest and of
// the six largest files.
func sffValues(reqs []sffRequest) map[string]float64 {
	served := func(r sffRequest) float64 { return float64(r.Served) }
	bySize := slices.Clone(reqs)
	slices.SortFunc(bySize, func(a, b sffRequest) int { return a.Size - b.Size })
	mean := func(rs []sffRequest) float64 {
		var sum time.Duration
		for _, r := range rs {
			sum += r.Done
		}
		return float64(sum) / float64(len(rs)) / float64(time.Millisecond)
	}
	half := len(bySize) / 2
	last := slices.MaxFunc(reqs, func(a, b sffRequest) int { return int(a.Done - b.Done) })
	return map[string]float64{
		"tau_arrival": kendall(reqs, func(r sffRequest) float64 { return float64(r.Arrival) }, served),
		"tau_size":    kendall(reqs, func(r sffRequest) float64 { return float64(r.Size) }, served),
		"small_ms":    mean(bySize[:half]),
		"large_ms":    mean(bySize[half:]),
		"last_ms":     float64(last.Done) / float64(time.Millisecond),
	}
}

// kendall is Kendall's rank correlation τ between x and y over rs:
// (concordant − discordant pairs) / all pairs.
func kendall(rs []sffRequest, x, y func(sffRequest) float64) float64 {
	var score, pairs float64
	for i := range rs {
		for j := i + 1; j < len(rs); j++ {
			dx, dy := x(rs[i])-x(rs[j]), y(rs[i])-y(rs[j])
			switch {
			case dx*dy > 0:
				score++
			case dx*dy < 0:
				score--
			}
			pairs++
		}
	}
	if pairs == 0 {
		return 0
	}
	return score / pairs
}

// writeSFFFiles writes every request of the sff part (sff_requests.csv) and
// its two plots: completion time by arrival and by file size, the median
// over the rounds for each request.
func writeSFFFiles(dir string, reqs []sffRequest) error {
	var csv strings.Builder
	csv.WriteString("policy,round,arrival,bytes,served,start_ms,done_ms\n")
	for _, r := range reqs {
		fmt.Fprintf(&csv, "%s,%d,%d,%d,%d,%.3f,%.3f\n", r.Policy, r.Round, r.Arrival, r.Size, r.Served, ms(r.Start), ms(r.Done))
	}
	if err := os.WriteFile(filepath.Join(dir, "sff_requests.csv"), []byte(csv.String()), 0o644); err != nil {
		return err
	}
	byArrival := func(r sffRequest) float64 { return float64(r.Arrival) }
	bySize := func(r sffRequest) float64 { return float64(r.Size) / 1024 }
	served := func(r sffRequest) float64 { return float64(r.Served - 1) } // the CGI request was first
	done := func(r sffRequest) float64 { return ms(r.Done) }
	arrivalTicks := plot.ConstantTicks(sizeTicks())
	return errors.Join(
		sffPlot(filepath.Join(dir, "sff_order.png"), reqs, byArrival, served, false, arrivalTicks,
			"Order of service, one worker (spin.cgi?1 held it while 12 files arrived)",
			"the files, in the order they arrived", "served as number … (server's log)"),
		sffPlot(filepath.Join(dir, "sff_done_by_size.png"), reqs, bySize, done, true, plot.LogTicks{Prec: -1},
			"When each file had arrived in full (median of the rounds)",
			"file size (KiB, log scale)", "last byte, ms after the first file's first"),
	)
}

// sizeTicks label the arrival axis with each file's size.
func sizeTicks() []plot.Tick {
	var ticks []plot.Tick
	for i, n := range sffSizes {
		label := fmt.Sprintf("%d KiB", n>>10)
		if n >= 1<<20 {
			label = fmt.Sprintf("%d MiB", n>>20)
		}
		ticks = append(ticks, plot.Tick{Value: float64(i + 1), Label: label})
	}
	return ticks
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// sffPlot draws y against x, one line per policy through the median of the
// rounds at each request.
func sffPlot(path string, reqs []sffRequest, x, y func(sffRequest) float64, logX bool, ticks plot.Ticker,
	title, xLabel, yLabel string) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.X.Tick.Marker = ticks
	if logX {
		p.X.Scale = plot.LogScale{}
	}
	// Bottom right: empty in both plots (late arrivals are served late under
	// FIFO, large files finish late under both).
	p.Legend.Top, p.Legend.Left = false, false
	for i, policy := range []string{"FIFO", "SFF"} {
		var pts plotter.XYs
		for _, arrival := range slices.Sorted(slices.Values(arrivals(reqs))) {
			var ys []float64
			var at float64
			for _, r := range reqs {
				if r.Policy == policy && r.Arrival == arrival {
					ys = append(ys, y(r))
					at = x(r)
				}
			}
			if len(ys) > 0 {
				pts = append(pts, plotter.XY{X: at, Y: runner.Median(ys)})
			}
		}
		if len(pts) == 0 {
			continue
		}
		slices.SortFunc(pts, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		line.Color = plotutil.Color(i)
		points.Color = line.Color
		points.Shape = plotutil.Shape(i)
		p.Add(line, points)
		p.Legend.Add(policy, line, points)
	}
	return p.Save(24*vg.Centimeter, 12*vg.Centimeter, path)
}

// arrivals are the arrival numbers present in reqs, once each.
func arrivals(reqs []sffRequest) []int {
	var out []int
	for _, r := range reqs {
		if !slices.Contains(out, r.Arrival) {
			out = append(out, r.Arrival)
		}
	}
	return out
}
