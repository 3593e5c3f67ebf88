//go:build solutions && linux

package main

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The whole experiment, shortened (2 then 3 testers on one server, 50 ms
// between messages, 300 ms each), against the reference server built from
// its package with a cheap hash: what make bench-chatcore runs, in about
// two seconds once the server is built.
func TestChatcoreExperiment(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs chapter 07's server")
	}
	out := t.TempDir()
	var stdout, stderr strings.Builder
	code := run(context.Background(), []string{"chatcore", "-steps", "2,3", "-runs", "1", "-duration", "300ms", "-interval", "50ms",
		"-servers", "ch07=serverlab/solutions/07/cmd/chatcore-server", "-server-args", "-hash-memory 64 -hash-time 1", "-out", out},
		&stdout, &stderr)
	if code != 0 {
		t.Fatalf("bench chatcore exited %d: %s", code, stderr.String())
	}
	md, err := os.ReadFile(filepath.Join(out, "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## ch07", "| 1 | 2 | ", "| 1 | 3 | ", "Largest client count with 0 failed"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("results.md lacks %q:\n%s", want, md)
		}
	}
	f, err := os.Open(filepath.Join(out, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("results.csv has %d lines, want a header and 2 steps:\n%v", len(rows), rows)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	for _, row := range rows[1:] {
		if row[col["error"]] != "" || row[col["sent"]] == "0" || row[col["cpu_s"]] == "" || row[col["tester_cpu_s"]] == "" {
			t.Errorf("step %s: want messages sent, no error and both CPUs measured: %v", row[col["clients"]], row)
		}
	}
	for _, png := range []string{"latency.png", "cpu.png"} {
		if st, err := os.Stat(filepath.Join(out, png)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", png, err)
		}
	}
}
