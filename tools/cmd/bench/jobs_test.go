package main

import (
	"strings"
	"testing"
)

// A real load_test run's output (ThreadForge, 10 clients × 300 MATMUL 32).
const loadTestOutput = `total_requests=3000 successes=3000 failures=0 duration_seconds=0.0931 throughput_requests_per_second=32223.4
mean_latency_ms=0.303 median_latency_ms=0.27 p95_latency_ms=0.52 p99_latency_ms=0.81 max_latency_ms=2.5
csv=3000,3000,0,0.0931,32223.4,0.303,0.27,0.52,0.81,2.5
`

func TestParseLoadTest(t *testing.T) {
	got, err := parseLoadTest([]byte(loadTestOutput))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"requests": 3000, "successes": 3000, "failures": 0, "throughput_rps": 32223.4,
		"mean_ms": 0.303, "p50_ms": 0.27, "p95_ms": 0.52, "p99_ms": 0.81, "max_ms": 2.5}
	if len(got) != len(want) {
		t.Errorf("got %d values %v, want %d %v", len(got), got, len(want), want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}

func TestParseLoadTestRejects(t *testing.T) {
	for _, out := range []string{
		"",
		"total_requests=3000 successes=3000\n",
		"csv=3000,3000,0,0.09\n",
		"csv=3000,3000,0,0.09,x,0.3,0.27,0.52,0.81,2.5\n",
	} {
		if v, err := parseLoadTest([]byte(out)); err == nil {
			t.Errorf("parseLoadTest(%q) = %v, want an error", out, v)
		}
	}
}

func TestParseWorkloads(t *testing.T) {
	got, err := parseWorkloads("prime, matmul")
	if err != nil || strings.Join(got, ",") != "prime,matmul" {
		t.Errorf(`parseWorkloads("prime, matmul") = %q, %v`, got, err)
	}
	if _, err := parseWorkloads("prime,hash"); err == nil {
		t.Error(`parseWorkloads("prime,hash"): want an error`)
	}
}
