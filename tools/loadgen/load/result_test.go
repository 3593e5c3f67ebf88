package load_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"serverlab/tools/loadgen/load"
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
	if err := res.WriteCSV(&buf, true, sampleLabels...); err != nil {
		t.Fatal(err)
	}
	if err := res.WriteCSV(&buf, false, sampleLabels...); err != nil { // an appended row
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatalf("reading back %q: %v", buf.String(), err)
	}
	if len(rows) != 3 {
		t.Fatalf("header + 2 rows written, read %d rows:\n%s", len(rows), buf.String())
	}
	header := load.CSVHeader("mode", "clients", "server")
	if strings.Join(rows[0], "|") != strings.Join(header, "|") {
		t.Errorf("header:\ngot  %q\nwant %q", rows[0], header)
	}
	for _, row := range rows[1:] {
		cell := make(map[string]string)
		for i, name := range rows[0] {
			cell[name] = row[i]
		}
		for _, l := range sampleLabels {
			if cell[l.Name] != l.Value {
				t.Errorf("label %s: got %q, want %q", l.Name, cell[l.Name], l.Value)
			}
		}
		checkInt(t, "successes", cell["successes"], res.Successes)
		checkInt(t, "failures", cell["failures"], res.Failures)
		if want := "timeout=2;bad reply=1"; cell["errors"] != want {
			t.Errorf("errors: got %q, want %q", cell["errors"], want)
		}
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
	if got, err := strconv.ParseInt(cell, 10, 64); err != nil || got != want {
		t.Errorf("%s: got %q, want %d", name, cell, want)
	}
}

func checkFloat(t *testing.T, name, cell string, want, tolerance float64) {
	t.Helper()
	got, err := strconv.ParseFloat(cell, 64)
	if err != nil || got < want-tolerance || got > want+tolerance {
		t.Errorf("%s: got %q, want %v ± %v", name, cell, want, tolerance)
	}
}

func TestWriteJSONParsesBack(t *testing.T) {
	res := sampleResult()
	var buf bytes.Buffer
	if err := res.WriteJSON(&buf, sampleLabels...); err != nil {
		t.Fatal(err)
	}
	var back load.Result
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatalf("decoding %s: %v", buf.String(), err)
	}
	back.Latency = res.Latency // not encoded
	if fmt.Sprintf("%+v", back) != fmt.Sprintf("%+v", res) {
		t.Errorf("JSON round trip:\nwrote %+v\nread  %+v\nvia   %s", res, back, buf.String())
	}
	var doc struct{ Labels map[string]string }
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, l := range sampleLabels {
		if doc.Labels[l.Name] != l.Value {
			t.Errorf("label %s: got %q, want %q in %s", l.Name, doc.Labels[l.Name], l.Value, buf.String())
		}
	}
}

func TestWriteText(t *testing.T) {
	res := sampleResult()
	var buf bytes.Buffer
	if err := res.WriteText(&buf, sampleLabels...); err != nil {
		t.Fatal(err)
	}
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
		if !strings.Contains(text, want) {
			t.Errorf("text summary lacks %q:\n%s", want, text)
		}
	}
}
