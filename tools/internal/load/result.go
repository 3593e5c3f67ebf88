package load

import (
	"cmp"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Result is what a run measured. Latencies are those of successful requests;
// percentiles come from the HDR histogram (within 0.1%), Max is exact.
type Result struct {
	Successes  int64
	Failures   int64
	Errors     map[string]int64  // failures by kind (see ErrorKind)
	Examples   map[string]string // the first error message of each kind, to tell what "other" was
	Wall       time.Duration     // from the first request to the last reply
	Throughput float64           // successes per second of Wall

	Mean, P50, P95, P99, P999, Max time.Duration

	// Latency is the merged histogram in microseconds, for callers that plot
	// the whole distribution. It is not written by the writers below.
	Latency *hdrhistogram.Histogram
}

// Label is one caller-supplied column (mode, clients, workers, server …) that
// the CSV and JSON writers put before the measurements, so that the rows of
// an experiment matrix say which cell they are.
type Label struct {
	Name, Value string
}

// ErrorSummary lists the failures by kind, most frequent first, e.g.
// "timeout=12;reset=3" — one CSV cell.
func (r Result) ErrorSummary() string {
	parts := make([]string, 0, len(r.Errors))
	for _, kind := range r.errorKinds() {
		parts = append(parts, kind+"="+strconv.FormatInt(r.Errors[kind], 10))
	}
	return strings.Join(parts, ";")
}

// errorKinds returns the kinds, most frequent first, then by name.
func (r Result) errorKinds() []string {
	kinds := slices.Collect(maps.Keys(r.Errors))
	slices.SortFunc(kinds, func(a, b string) int {
		if c := cmp.Compare(r.Errors[b], r.Errors[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return kinds
}

// WriteText writes a short human summary, preceded by the labels if any.
func (r Result) WriteText(w io.Writer, labels ...Label) error {
	var b strings.Builder
	if len(labels) > 0 {
		parts := make([]string, len(labels))
		for i, l := range labels {
			parts[i] = l.Name + "=" + l.Value
		}
		fmt.Fprintln(&b, strings.Join(parts, " "))
	}
	fmt.Fprintf(&b, "  requests    %d ok, %d failed in %v\n", r.Successes, r.Failures, roundSig(r.Wall))
	fmt.Fprintf(&b, "  throughput  %.1f req/s\n", r.Throughput)
	if r.Successes > 0 {
		fmt.Fprintf(&b, "  latency     mean %v  p50 %v  p95 %v  p99 %v  p99.9 %v  max %v\n",
			roundSig(r.Mean), roundSig(r.P50), roundSig(r.P95), roundSig(r.P99), roundSig(r.P999), roundSig(r.Max))
	}
	if r.Failures > 0 {
		kinds := r.errorKinds()
		counts := make([]string, len(kinds))
		for i, kind := range kinds {
			counts[i] = fmt.Sprintf("%s %d", kind, r.Errors[kind])
		}
		fmt.Fprintf(&b, "  errors      %s\n", strings.Join(counts, ", "))
		for _, kind := range kinds {
			if msg, ok := r.Examples[kind]; ok {
				fmt.Fprintf(&b, "              %s: %s\n", kind, msg)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// roundSig rounds d to 3 significant digits for display: 1.234567ms → 1.23ms.
func roundSig(d time.Duration) time.Duration {
	unit := time.Duration(1)
	for d/unit >= 1000 {
		unit *= 10
	}
	return d.Round(unit)
}

// measureColumns are the CSV columns after the labels. Durations are in
// milliseconds with microsecond precision, wall time in seconds.
var measureColumns = []string{
	"successes", "failures", "errors", "wall_s", "throughput_rps",
	"mean_ms", "p50_ms", "p95_ms", "p99_ms", "p999_ms", "max_ms",
}

// CSVHeader returns the header row for results labelled with these names.
func CSVHeader(labelNames ...string) []string {
	return append(slices.Clone(labelNames), measureColumns...)
}

// CSVRecord returns r as one CSV row, after the given label values; it
// matches CSVHeader. Use it with encoding/csv to write many results.
func (r Result) CSVRecord(labelValues ...string) []string {
	return append(slices.Clone(labelValues),
		strconv.FormatInt(r.Successes, 10),
		strconv.FormatInt(r.Failures, 10),
		r.ErrorSummary(),
		strconv.FormatFloat(r.Wall.Seconds(), 'f', 6, 64),
		strconv.FormatFloat(r.Throughput, 'f', 1, 64),
		millis(r.Mean), millis(r.P50), millis(r.P95), millis(r.P99), millis(r.P999), millis(r.Max),
	)
}

func millis(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 3, 64)
}

// WriteCSV writes r as one CSV row with the labels' values first, preceded by
// the header row when header is true (e.g. when the file is new).
func (r Result) WriteCSV(w io.Writer, header bool, labels ...Label) error {
	names := make([]string, len(labels))
	values := make([]string, len(labels))
	for i, l := range labels {
		names[i], values[i] = l.Name, l.Value
	}
	cw := csv.NewWriter(w)
	if header {
		if err := cw.Write(CSVHeader(names...)); err != nil {
			return err
		}
	}
	if err := cw.Write(r.CSVRecord(values...)); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSON writes r as one JSON object (one line), with the labels as a
// "labels" object.
func (r Result) WriteJSON(w io.Writer, labels ...Label) error {
	doc := r.toJSON()
	if len(labels) > 0 {
		doc.Labels = make(map[string]string, len(labels))
		for _, l := range labels {
			doc.Labels[l.Name] = l.Value
		}
	}
	return json.NewEncoder(w).Encode(doc)
}

// jsonResult is Result's JSON form: the same names as the CSV columns, and
// float milliseconds rather than Go's integer nanoseconds, so that a plot
// script reads it without knowing Go.
type jsonResult struct {
	Labels     map[string]string `json:"labels,omitempty"`
	Successes  int64             `json:"successes"`
	Failures   int64             `json:"failures"`
	Errors     map[string]int64  `json:"errors,omitempty"`
	Examples   map[string]string `json:"examples,omitempty"`
	Wall       float64           `json:"wall_s"`
	Throughput float64           `json:"throughput_rps"`
	Mean       float64           `json:"mean_ms"`
	P50        float64           `json:"p50_ms"`
	P95        float64           `json:"p95_ms"`
	P99        float64           `json:"p99_ms"`
	P999       float64           `json:"p999_ms"`
	Max        float64           `json:"max_ms"`
}

func (r Result) toJSON() jsonResult {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return jsonResult{
		Successes: r.Successes, Failures: r.Failures, Errors: r.Errors, Examples: r.Examples,
		Wall: r.Wall.Seconds(), Throughput: r.Throughput,
		Mean: ms(r.Mean), P50: ms(r.P50), P95: ms(r.P95), P99: ms(r.P99), P999: ms(r.P999), Max: ms(r.Max),
	}
}

// MarshalJSON encodes r as WriteJSON does, without labels.
func (r Result) MarshalJSON() ([]byte, error) { return json.Marshal(r.toJSON()) }

// UnmarshalJSON decodes what MarshalJSON or WriteJSON wrote (labels are
// ignored; Latency stays nil).
func (r *Result) UnmarshalJSON(data []byte) error {
	var j jsonResult
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	fromMs := func(ms float64) time.Duration { return time.Duration(math.Round(ms * float64(time.Millisecond))) }
	*r = Result{
		Successes: j.Successes, Failures: j.Failures, Errors: j.Errors, Examples: j.Examples,
		Wall:       time.Duration(math.Round(j.Wall * float64(time.Second))),
		Throughput: j.Throughput,
		Mean:       fromMs(j.Mean), P50: fromMs(j.P50), P95: fromMs(j.P95), P99: fromMs(j.P99),
		P999: fromMs(j.P999), Max: fromMs(j.Max),
	}
	return nil
}
