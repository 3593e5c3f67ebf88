package load_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"serverlab/tools/internal/load"
)

// sampleResult returns a Result with latencies and two kinds of error.
func sampleResult() load.Result {
	rec := load.NewRecorder()
	for _, d := range exponentialLatencies(1000) {
		rec.Succeed(d)
	}
	rec.Fail(fmt.Errorf("read: %w", load.ErrBadReply))
	rec.Fail(load.WithKind(load.KindTimeout, fmt.Errorf("read tcp: i/o timeout")))
	rec.Fail(load.WithKind(load.KindTimeout, fmt.Errorf("read tcp: i/o timeout")))
	return rec.Result(1234567891 * time.Nanosecond)
}

var sampleLabels = []load.Label{{"mode", "tcp-echo"}, {"clients", "10"}, {"server", "a,b"}}

func TestWriteCSVParsesBack(t *testing.T) {
	res := sampleResult()
	var buf bytes.Buffer
	require.NoError(t, res.WriteCSV(&buf, true, sampleLabels...))
	require.NoError(t, res.WriteCSV(&buf, false, sampleLabels...)) // an appended row
	rows, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err, "reading back %q", buf.String())
	require.Len(t, rows, 3, "header + 2 rows written")
	assert.Equal(t, load.CSVHeader("mode", "clients", "server"), rows[0], "header")
	for _, row := range rows[1:] {
		cell := make(map[string]string)
		for i, name := range rows[0] {
			cell[name] = row[i]
		}
		for _, l := range sampleLabels {
			assert.Equal(t, l.Value, cell[l.Name], "label %s", l.Name)
		}
		checkInt(t, "successes", cell["successes"], res.Successes)
		checkInt(t, "failures", cell["failures"], res.Failures)
		assert.Equal(t, "timeout=2;bad reply=1", cell["errors"], "errors")
		checkFloat(t, "wall_s", cell["wall_s"], res.Wall.Seconds(), 1e-6)
		checkFloat(t, "throughput_rps", cell["throughput_rps"], res.Throughput, 0.05)
		for name, d := range map[string]time.Duration{
			"mean_ms": res.Mean, "p50_ms": res.P50, "p95_ms": res.P95, "p99_ms": res.P99, "p999_ms": res.P999, "max_ms": res.Max,
		} {
			checkFloat(t, name, cell[name], float64(d)/float64(time.Millisecond), 0.0005)
		}
	}
}

func checkInt(t *testing.T, name, cell string, want int64) {
	t.Helper()
	got, err := strconv.ParseInt(cell, 10, 64)
	if assert.NoError(t, err, "%s: %q", name, cell) {
		assert.Equal(t, want, got, name)
	}
}

func checkFloat(t *testing.T, name, cell string, want, tolerance float64) {
	t.Helper()
	got, err := strconv.ParseFloat(cell, 64)
	if assert.NoError(t, err, "%s: %q", name, cell) {
		assert.InDelta(t, want, got, tolerance, name)
	}
}

func TestWriteJSONParsesBack(t *testing.T) {
	res := sampleResult()
	var buf bytes.Buffer
	require.NoError(t, res.WriteJSON(&buf, sampleLabels...))
	var back load.Result
	require.NoError(t, json.Unmarshal(buf.Bytes(), &back), "decoding %s", buf.String())
	back.Latency = res.Latency // not encoded
	assert.Equal(t, res, back, "JSON round trip via %s", buf.String())
	var doc struct{ Labels map[string]string }
	require.NoError(t, json.Unmarshal(buf.Bytes(), &doc))
	for _, l := range sampleLabels {
		assert.Equal(t, l.Value, doc.Labels[l.Name], "label %s in %s", l.Name, buf.String())
	}
}

func TestWriteText(t *testing.T) {
	res := sampleResult()
	var buf bytes.Buffer
	require.NoError(t, res.WriteText(&buf, sampleLabels...))
	text := buf.String()
	wants := []string{
		"mode=tcp-echo clients=10 server=a,b\n",
		fmt.Sprintf("%d ok, %d failed", res.Successes, res.Failures),
		fmt.Sprintf("%.1f req/s", res.Throughput),
		"p99.9 ",
		"timeout 2, bad reply 1",
		"timeout: read tcp: i/o timeout",
	}
	for _, want := range wants {
		assert.Contains(t, text, want, "text summary")
	}
}
