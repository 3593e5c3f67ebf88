package runner

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{1, 1, 100}, 1},
	} {
		in := slices.Clone(tc.in)
		if got := Median(in); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
		}
		if !slices.Equal(in, tc.in) {
			t.Errorf("Median(%v) reordered its argument to %v", tc.in, in)
		}
	}
	if got := Median(nil); !math.IsNaN(got) {
		t.Errorf("Median(nil) = %v, want NaN", got)
	}
}

func TestOrderInterleavesAndRotates(t *testing.T) {
	e := Experiment{Servers: []Server{{Name: "a"}, {Name: "b"}, {Name: "c"}}, Clients: []int{1, 10}, Rounds: 2}
	var got []string
	for _, st := range e.Order() {
		got = append(got, fmt.Sprintf("%d/%d/%s", st.Clients, st.Round, e.Servers[st.Server].Name))
	}
	want := []string{
		"1/1/a", "1/1/b", "1/1/c", "1/2/b", "1/2/c", "1/2/a",
		"10/1/a", "10/1/b", "10/1/c", "10/2/b", "10/2/c", "10/2/a",
	}
	if !slices.Equal(got, want) {
		t.Errorf("order:\n got %v\nwant %v", got, want)
	}
}

func TestOrderCoversEveryKnob(t *testing.T) {
	e := Experiment{Servers: []Server{{Name: "a"}, {Name: "b"}}, Clients: []int{4}, Knobs: []string{"x", "y"}, Rounds: 3}
	count := map[Step]int{}
	for _, st := range e.Order() {
		count[st]++
	}
	if len(count) != 2*2*3 {
		t.Fatalf("%d distinct trials, want 12 (2 servers × 2 knobs × 3 rounds): %v", len(count), count)
	}
}

// sample returns results of two servers in two cells, three rounds each,
// with one failed trial.
func sample() *Results {
	r := &Results{Name: "demo", Command: "go run ./tools/cmd/bench demo", Baseline: "old", Servers: []string{"old", "new"},
		Table:   []Column{{Key: "p99_ms", Title: "p99 ms", Ratio: true}, {Key: "rss_kib", Title: "RSS KiB"}},
		latency: map[cellKey]*hdrhistogram.Histogram{}}
	for _, clients := range []int{10, 100} {
		for round := 1; round <= 3; round++ {
			scale := float64(clients / 10)
			r.add(Row{Experiment: "demo", Server: "old", Clients: clients, Round: round,
				Values: map[string]float64{"p99_ms": scale * float64(9+round), "rss_kib": 1000}}, nil)
			row := Row{Experiment: "demo", Server: "new", Clients: clients, Round: round,
				Values: map[string]float64{"p99_ms": scale * float64(4+round)}}
			if clients == 100 && round == 3 {
				row.Err, row.Values = "boom", map[string]float64{"p99_ms": 1e9}
			}
			r.add(row, nil)
		}
	}
	return r
}

func TestMedianAndRatioPerCell(t *testing.T) {
	r := sample()
	if v, n := r.Median("old", Cell{Clients: 10}, "p99_ms"); v != 11 || n != 3 {
		t.Errorf("old's median p99 at 10 clients = %v of %d trials, want 11 of 3", v, n)
	}
	// The failed trial (1e9) is left out: median of 50 and 60.
	if v, n := r.Median("new", Cell{Clients: 100}, "p99_ms"); v != 55 || n != 2 {
		t.Errorf("new's median p99 at 100 clients = %v of %d trials, want 55 of 2", v, n)
	}
	if got := r.Ratio("new", Cell{Clients: 10}, "p99_ms"); math.Abs(got-6.0/11) > 1e-9 {
		t.Errorf("ratio new/old at 10 clients = %v, want 6/11", got)
	}
	if got := r.Ratio("new", Cell{Clients: 10}, "rss_kib"); !math.IsNaN(got) {
		t.Errorf("ratio of a value new lacks = %v, want NaN", got)
	}
}

func TestWriteMarkdown(t *testing.T) {
	var b strings.Builder
	if err := sample().WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"Command: `go run ./tools/cmd/bench demo`",
		"| server | clients | trials | p99 ms | × old | RSS KiB |",
		"| old | 10 | 3 | 11.0 | 1.00× | 1000 |",
		"| new | 10 | 3 | 6.00 | 0.545× | – |",
		"| new | 100 | 2/3 | 55.0 | 0.500× | – |",
		"- new, 100 clients, round 3: boom",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the table lacks %q; got:\n%s", want, md)
		}
	}
}

func TestWriteCSV(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCSV(&b, sample()); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatalf("results.csv does not parse: %v\n%s", err, b.String())
	}
	wantHeader := []string{"experiment", "server", "clients", "knob", "round", "error", "p99_ms", "rss_kib"}
	if !slices.Equal(recs[0], wantHeader) {
		t.Errorf("header = %v, want %v", recs[0], wantHeader)
	}
	if len(recs) != 1+12 {
		t.Fatalf("%d rows, want a header and 12 trials", len(recs))
	}
	if want := []string{"demo", "new", "10", "", "1", "", "5", ""}; !slices.Equal(recs[2], want) {
		t.Errorf("row 2 = %v, want %v", recs[2], want)
	}
}

func TestPlotsWriteValidPNGs(t *testing.T) {
	dir := t.TempDir()
	r := sample()
	r.Plots = []Plot{
		{File: "p99.png", Title: "p99", Y: "ms", Keys: []string{"p99_ms"}, LogX: true},
		{File: "rss.png", Title: "RSS", Y: "MiB", Keys: []string{"rss_kib"}, Scale: 1.0 / 1024, Bars: true},
	}
	if err := WriteFiles(dir, r); err != nil {
		t.Fatal(err)
	}
	h := hdrhistogram.New(1, 60_000_000, 3)
	for i := range 1000 {
		h.RecordValue(int64(100 + i*i))
	}
	dist := filepath.Join(dir, "dist.png")
	if err := DistributionPlot(dist, "delivery", []Dist{{"a", h}, {"empty", nil}}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"p99.png", "rss.png", "dist.png"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s is not a PNG: %v", name, err)
		}
		if b := img.Bounds(); b.Dx() < 400 || b.Dy() < 200 {
			t.Errorf("%s is %v, too small to read", name, b)
		}
	}
	for _, name := range []string{"results.csv", "results.md"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("WriteFiles did not write %s: %v", name, err)
		}
	}
}

func TestDistributionPlotWithoutSamplesFails(t *testing.T) {
	err := DistributionPlot(filepath.Join(t.TempDir(), "x.png"), "x", []Dist{{"a", nil}})
	if err == nil {
		t.Fatal("DistributionPlot drew a plot of nothing")
	}
}
