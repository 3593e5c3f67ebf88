// Package load is the core of the course's load generator: a latency
// recorder built on an HDR histogram, two drivers that issue requests
// (ClosedLoop: N clients, one request outstanding each; FixedRate: open-loop
// arrivals at a given rate), and the Result they return with its text, CSV
// and JSON writers.
//
// A protocol plugs in as a NewClient function: it sets up one client (dial a
// connection, log in) and returns a Client whose Do sends one request and
// waits for its reply. The drivers own everything else: concurrency, timing,
// bounds, error counting, progress, and replacing a client after a failure.
//
// Every run is bounded by a request count or a duration (the drivers refuse
// a run with neither) and honours its context.
package load

import (
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// The recorder's range and precision: 1 µs to 60 s with 3 significant
// figures, i.e. every percentile is within 0.1% of the true value. Latencies
// outside the range are clamped to it rather than dropped, so a 2-minute stall
// still shows up (as 60 s) instead of vanishing from the tail.
const (
	MinLatency  = time.Microsecond
	MaxLatency  = 60 * time.Second
	sigFigures  = 3
	histLowest  = int64(MinLatency / time.Microsecond)
	histHighest = int64(MaxLatency / time.Microsecond)
)

// Recorder collects the latencies of successful requests in an HDR histogram
// and counts failures by kind (see ErrorKind).
//
// It is safe for concurrent use, but it is meant to be owned by one goroutine
// (or a few) and merged at the end: its lock is then never contended, and the
// hot path costs a histogram increment. The drivers give each client its own
// recorder up to a bound (a histogram is ~140 KiB) and merge them when the run
// ends.
type Recorder struct {
	mu        sync.Mutex
	hist      *hdrhistogram.Histogram // microseconds
	successes int64
	max       time.Duration // exact, the histogram's is rounded up
	failures  int64
	errors    map[string]int64
	examples  map[string]string // the first message seen of each kind
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder {
	return &Recorder{
		hist:     hdrhistogram.New(histLowest, histHighest, sigFigures),
		errors:   make(map[string]int64),
		examples: make(map[string]string),
	}
}

// Record counts one request: a success that took d when err is nil, a
// failure of kind ErrorKind(err) otherwise.
func (r *Recorder) Record(d time.Duration, err error) {
	if err != nil {
		r.Fail(err)
		return
	}
	r.Succeed(d)
}

// Succeed records one successful request that took d.
func (r *Recorder) Succeed(d time.Duration) {
	d = min(max(d, MinLatency), MaxLatency)
	r.mu.Lock()
	defer r.mu.Unlock()
	// Cannot fail: d is clamped to the histogram's range.
	_ = r.hist.RecordValue(int64(d / time.Microsecond))
	r.successes++
	r.max = max(r.max, d)
}

// Fail records one failed request. Its latency is not recorded: the
// histogram describes the requests that were served.
func (r *Recorder) Fail(err error) {
	kind := ErrorKind(err)
	if kind == "" {
		kind = KindOther
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures++
	r.errors[kind]++
	if _, seen := r.examples[kind]; !seen && err != nil {
		r.examples[kind] = err.Error()
	}
}

// Counts returns the number of successes and failures so far; the progress
// line reads it once a second.
func (r *Recorder) Counts() (successes, failures int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.successes, r.failures
}

// Merge adds everything src recorded to r. It copies src under src's lock and
// then adds under r's, never holding both, so two recorders merging into each
// other cannot deadlock.
func (r *Recorder) Merge(src *Recorder) {
	snap := src.snapshot()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hist.Merge(snap.hist)
	r.successes += snap.successes
	r.max = max(r.max, snap.max)
	r.failures += snap.failures
	for kind, n := range snap.errors {
		r.errors[kind] += n
	}
	for kind, msg := range snap.examples {
		if _, seen := r.examples[kind]; !seen {
			r.examples[kind] = msg
		}
	}
}

// snapshot returns an independent copy of r's state.
func (r *Recorder) snapshot() *Recorder {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := &Recorder{
		hist:      r.hist.Clone(),
		successes: r.successes,
		max:       r.max,
		failures:  r.failures,
		errors:    make(map[string]int64, len(r.errors)),
		examples:  make(map[string]string, len(r.examples)),
	}
	for k, v := range r.errors {
		c.errors[k] = v
	}
	for k, v := range r.examples {
		c.examples[k] = v
	}
	return c
}

// Result summarises what r recorded over a run that took wall.
func (r *Recorder) Result(wall time.Duration) Result {
	s := r.snapshot()
	res := Result{
		Successes: s.successes,
		Failures:  s.failures,
		Errors:    s.errors,
		Examples:  s.examples,
		Wall:      wall,
		Latency:   s.hist,
	}
	if wall > 0 {
		res.Throughput = float64(s.successes) / wall.Seconds()
	}
	if s.successes == 0 {
		return res
	}
	res.Mean = time.Duration(s.hist.Mean() * float64(time.Microsecond))
	res.Max = s.max
	res.P50 = quantile(s.hist, 50, s.max)
	res.P95 = quantile(s.hist, 95, s.max)
	res.P99 = quantile(s.hist, 99, s.max)
	res.P999 = quantile(s.hist, 99.9, s.max)
	return res
}

// quantile reads a percentile from h. The histogram answers with the top of
// the value's bucket (up to 0.1% high); capping it at the exact maximum keeps
// p50 <= max when every request took the same time.
func quantile(h *hdrhistogram.Histogram, percent float64, maxLatency time.Duration) time.Duration {
	return min(time.Duration(h.ValueAtQuantile(percent))*time.Microsecond, maxLatency)
}

// stripes are the recorders of one run: one per client up to maxStripes,
// shared round-robin beyond that. Sharing keeps memory bounded for thousands
// of clients; with that many clients each lock is still rarely contended.
type stripes []*Recorder

const maxStripes = 64

func newStripes(clients int) stripes {
	s := make(stripes, max(1, min(clients, maxStripes)))
	for i := range s {
		s[i] = NewRecorder()
	}
	return s
}

// of returns the recorder of client id.
func (s stripes) of(id int) *Recorder { return s[id%len(s)] }

// counts sums the stripes' counts for the progress line.
func (s stripes) counts() (successes, failures int64) {
	for _, r := range s {
		ok, failed := r.Counts()
		successes += ok
		failures += failed
	}
	return successes, failures
}

// result merges the stripes into one Result.
func (s stripes) result(wall time.Duration) Result {
	all := NewRecorder()
	for _, r := range s {
		all.Merge(r)
	}
	return all.Result(wall)
}
