package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"serverlab/tools/internal/runner"
)

func TestStockBadFlagsAreUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"stock", "-shares", "many"},
		{"stock", "-shares", "0"},
		{"stock", "-clients", "1"},
		{"stock", "-workers", "0"},
		{"stock", "-servers", "nginx"},
	} {
		var out, errs strings.Builder
		if code := run(context.Background(), append(args, "-peers", ""), &out, &errs); code != 2 {
			t.Errorf("bench %q exited %d, want 2 (usage); stderr: %s", args, code, errs.String())
		}
	}
}

func TestStockSelectKeepsTheNamedServersInOrder(t *testing.T) {
	all := stockOurServers(4)
	got, err := stockSelect(all, "ch05, ch04")
	if err != nil || len(got) != 2 || got[0].Name != "ch05" || got[1].Name != "ch04" {
		t.Fatalf("stockSelect(ch05, ch04) = %v, %v", got, err)
	}
	if got, _ := stockSelect(all, ""); len(got) != len(all) {
		t.Errorf("an empty -servers keeps %d of %d servers", len(got), len(all))
	}
}

func TestStockFileHasTheOriginalsTenStocks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stock.txt")
	if err := stockWriteFile(path, "1000000"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 10 || lines[0] != "1 1000000 100" || lines[9] != "10 1000000 1000" {
		t.Errorf("stock file:\n%s", data)
	}
}

// fakeMCB writes a shell script standing in for multiclient_benchmark.
func fakeMCB(t *testing.T, body string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("needs /bin/sh")
	}
	path := filepath.Join(t.TempDir(), "multiclient_benchmark")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestStockMCBSilenceIsSuccessAndOutputIsFailure(t *testing.T) {
	tr := &runner.Trial{Clients: 16, Addr: "127.0.0.1:9"}
	s := stockSettings{queries: 1000, mcb: fakeMCB(t, `[ "$1 $2 $3 $4" = "127.0.0.1 9 16 1000" ] || echo "bad args: $*"`)}
	v, err := stockRunMCB(context.Background(), tr, s)
	if err != nil {
		t.Fatalf("a benchmark that printed nothing: %v", err)
	}
	if v["successes"] != 992 || v["throughput_rps"] <= 0 { // 16 clients × (1000 / 16)
		t.Errorf("values %v, want 992 successes and a throughput", v)
	}
	// csapp's wrappers print the error and exit 0.
	s.mcb = fakeMCB(t, `echo "Open_clientfd error: Connection refused"; exit 0`)
	if _, err := stockRunMCB(context.Background(), tr, s); err == nil || !strings.Contains(err.Error(), "Connection refused") {
		t.Errorf("a benchmark that printed an error: %v, want that error", err)
	}
}

func TestStockTrialTimesOutOnAHungServer(t *testing.T) {
	tr := &runner.Trial{Clients: 2, Addr: "127.0.0.1:9", PID: os.Getpid()}
	s := stockSettings{queries: 10, mcb: fakeMCB(t, "exec sleep 10"), timeout: 100 * time.Millisecond}
	_, err := stockTrial(context.Background(), tr, s)
	if err == nil || !strings.Contains(err.Error(), "hang") {
		t.Errorf("a benchmark that never ends: %v, want a timeout that suspects the server", err)
	}
}

func TestStockReadCostsOfThisProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	c, err := stockReadCosts(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if c.switches == 0 {
		t.Errorf("costs %+v: no context switches counted over this process's threads", c)
	}
}

func TestStockGoalsCompareEachServerWithItsOriginal(t *testing.T) {
	row := func(server string, qps, cpu float64) runner.Row {
		return runner.Row{Server: server, Clients: 16, Knob: "1000000", Round: 1,
			Values: map[string]float64{"throughput_rps": qps, "cpu_us_per_op": cpu}}
	}
	res := &runner.Results{Baseline: "thread", Command: "go run ./tools/cmd/bench stock", Rows: []runner.Row{
		row("ch04", 44000, 6), row("ch04-2P", 40000, 12), row("thread", 40000, 10),
		row("ch05", 30000, 10), row("event", 30000, 10),
	}}
	path := filepath.Join(t.TempDir(), "goals.md")
	if err := stockWriteGoals(path, res, true); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	for _, want := range []string{
		"| ch04 vs thread | 1000000 | 16 | 44.0k / 40.0k | 1.10 | 6.0 / 10.0 | 0.60 | yes |",
		"| ch05 vs event | 1000000 | 16 | 30.0k / 30.0k | 1.00 | 10.0 / 10.0 | 1.00 | no |",
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("goals.md lacks %q:\n%s", want, data)
		}
	}
}
