package load_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"serverlab/tools/internal/load"
)

// nearestRank is the reference percentile: the smallest input such that at
// least percent% of the inputs are <= it.
func nearestRank(sorted []time.Duration, percent float64) time.Duration {
	rank := int(math.Ceil(percent / 100 * float64(len(sorted))))
	return sorted[max(rank, 1)-1]
}

func mean(ds []time.Duration) time.Duration {
	var sum float64
	for _, d := range ds {
		sum += float64(d)
	}
	return time.Duration(sum / float64(len(ds)))
}

// within reports whether got is within the recorder's precision of want: 3
// significant figures (0.1%), plus the 1 µs resolution.
func within(got, want time.Duration) bool {
	diff := got - want
	if diff < 0 {
		diff = -diff
	}
	return diff <= want/1000+time.Microsecond
}

// checkLatencies compares a Result's latency statistics with the reference
// computed from the inputs.
func checkLatencies(t *testing.T, res load.Result, inputs []time.Duration) {
	t.Helper()
	sorted := slices.Sorted(slices.Values(inputs))
	checks := []struct {
		name      string
		got, want time.Duration
	}{
		{"mean", res.Mean, mean(sorted)},
		{"p50", res.P50, nearestRank(sorted, 50)},
		{"p95", res.P95, nearestRank(sorted, 95)},
		{"p99", res.P99, nearestRank(sorted, 99)},
		{"p99.9", res.P999, nearestRank(sorted, 99.9)},
		{"max", res.Max, sorted[len(sorted)-1]},
	}
	for _, c := range checks {
		if !within(c.got, c.want) {
			t.Errorf("%s of %d inputs: got %v, want %v (±0.1%%)", c.name, len(inputs), c.got, c.want)
		}
	}
	if res.Successes != int64(len(inputs)) {
		t.Errorf("successes: got %d, want %d", res.Successes, len(inputs))
	}
}

// exponentialLatencies returns n latencies with a long tail (mean 2 ms), from
// a fixed seed so that a failure can be replayed.
func exponentialLatencies(n int) []time.Duration {
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = time.Duration(rng.ExpFloat64()*float64(2*time.Millisecond)) + time.Microsecond
	}
	return out
}

func TestRecorderPercentiles(t *testing.T) {
	uniform := make([]time.Duration, 100_000)
	for i := range uniform {
		uniform[i] = time.Duration(i+1) * time.Microsecond
	}
	// 99% fast and 1% slow: p99 must still be fast, p99.9 slow.
	var bimodal []time.Duration
	for i := range 1000 {
		d := time.Millisecond
		if i%100 == 0 {
			d = 100 * time.Millisecond
		}
		bimodal = append(bimodal, d)
	}
	cases := map[string][]time.Duration{
		"uniform":     uniform,
		"bimodal":     bimodal,
		"exponential": exponentialLatencies(50_000),
		"single":      {1234567 * time.Microsecond},
	}
	for name, inputs := range cases {
		t.Run(name, func(t *testing.T) {
			rec := load.NewRecorder()
			for _, d := range inputs {
				rec.Record(d, nil)
			}
			checkLatencies(t, rec.Result(time.Second), inputs)
		})
	}
}

func TestRecorderClampsToRange(t *testing.T) {
	rec := load.NewRecorder()
	rec.Succeed(0)
	rec.Succeed(2 * load.MaxLatency)
	res := rec.Result(time.Second)
	if res.Successes != 2 {
		t.Errorf("recorded 0 and 2×MaxLatency: got %d successes, want 2", res.Successes)
	}
	if res.P50 != load.MinLatency || res.Max != load.MaxLatency {
		t.Errorf("recorded 0 and 2×MaxLatency: got p50 %v max %v, want %v and %v",
			res.P50, res.Max, load.MinLatency, load.MaxLatency)
	}
}

func TestRecorderCountsErrorsByKind(t *testing.T) {
	rec := load.NewRecorder()
	failures := []error{
		load.ErrBadReply,
		errors.Join(errors.New("read"), load.ErrBadReply),
		load.WithKind("wrong sender", errors.New("from bob, want alice")),
		errors.New("something new"),
	}
	for _, err := range failures {
		rec.Fail(err)
	}
	rec.Succeed(time.Millisecond)
	res := rec.Result(2 * time.Second)

	want := map[string]int64{load.KindBadReply: 2, "wrong sender": 1, load.KindOther: 1}
	if !equalCounts(res.Errors, want) || res.Failures != int64(len(failures)) || res.Successes != 1 {
		t.Errorf("recorded %v and one success:\ngot  %d ok, %d failed %v\nwant 1 ok, %d failed %v",
			failures, res.Successes, res.Failures, res.Errors, len(failures), want)
	}
	if got, want := res.Examples[load.KindOther], "something new"; got != want {
		t.Errorf("example of kind other: got %q, want %q", got, want)
	}
	if got, want := res.Throughput, 1/res.Wall.Seconds(); got != want {
		t.Errorf("throughput of 1 success in %v: got %v, want %v", res.Wall, got, want)
	}
}

func equalCounts(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestRecorderMerge checks that recording into several recorders (from
// several goroutines) and merging gives the same result as one recorder.
func TestRecorderMerge(t *testing.T) {
	inputs := exponentialLatencies(40_000)
	const parts = 4
	one := load.NewRecorder()
	for _, d := range inputs {
		one.Succeed(d)
	}
	recs := make([]*load.Recorder, parts)
	var wg sync.WaitGroup
	for p := range parts {
		recs[p] = load.NewRecorder()
		wg.Go(func() {
			for i := p; i < len(inputs); i += parts {
				recs[p].Succeed(inputs[i])
			}
			recs[p].Fail(load.ErrBadReply)
		})
	}
	wg.Wait()
	merged := load.NewRecorder()
	for _, r := range recs {
		merged.Merge(r)
	}

	got, want := merged.Result(time.Second), one.Result(time.Second)
	if got.Mean != want.Mean || got.P50 != want.P50 || got.P99 != want.P99 || got.P999 != want.P999 || got.Max != want.Max {
		t.Errorf("merged %d recorders:\ngot  %+v\nwant %+v", parts, got, want)
	}
	checkLatencies(t, got, inputs)
	if got.Errors[load.KindBadReply] != parts || got.Failures != parts {
		t.Errorf("merged %d recorders with one bad reply each: got %d failures %v", parts, got.Failures, got.Errors)
	}
}

// TestRecorderConcurrentUse records into one recorder from many goroutines
// (the race detector checks the locking) and checks nothing is lost.
func TestRecorderConcurrentUse(t *testing.T) {
	const goroutines, each = 8, 1000
	rec := load.NewRecorder()
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				if i%10 == 0 {
					rec.Fail(load.ErrBadReply)
					continue
				}
				rec.Succeed(time.Duration(g*each+i) * time.Microsecond)
			}
		})
	}
	wg.Wait()
	ok, failed := rec.Counts()
	if wantFailed := int64(goroutines * each / 10); ok+failed != goroutines*each || failed != wantFailed {
		t.Errorf("%d goroutines × %d records: got %d ok + %d failed, want %d failed of %d",
			goroutines, each, ok, failed, wantFailed, goroutines*each)
	}
}
