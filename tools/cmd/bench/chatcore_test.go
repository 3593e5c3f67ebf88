package main

import (
	"context"
	"io"
	"net"
	"runtime"
	"strings"
	"testing"

	"serverlab/tools/internal/runner"
)

func TestChatcoreBadFlagsAreUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"chatcore", "-steps", "5,x"},
		{"chatcore", "-steps", "0"},
		{"chatcore", "-servers", "no-label"},
		{"chatcore", "-runs", "0"},
	} {
		var out, errs strings.Builder
		if code := run(context.Background(), args, &out, &errs); code != 2 {
			t.Errorf("bench %q exited %d, want 2 (usage); stderr: %s", args, code, errs.String())
		}
	}
}

// chatcoreRow is one step of one run as chatcoreTrial and the runner
// record it.
func chatcoreRow(run, clients int, failed, p99 float64) runner.Row {
	return runner.Row{Experiment: "chatcore", Server: "ch07", Clients: clients, Round: run, Values: map[string]float64{
		"sent": 9 * float64(clients), "failed": failed, "p50_us": 1000, "p95_us": 2000, "p99_us": p99, "max_us": 9000,
		"cpu_s": 1.5, "tester_cpu_s": 0.25, "load1": 1, "load5": 2, "load15": 3,
	}}
}

func chatcoreResults(rows ...runner.Row) *runner.Results {
	e := chatcoreExperiment("go run ./tools/cmd/bench chatcore", []runner.Server{{Name: "ch07", Bin: "x"}}, nil, 3, chatcoreSettings{})
	return &runner.Results{Name: e.Name, Command: e.Command, Baseline: "ch07", Servers: []string{"ch07"}, Rows: rows, Table: e.Table}
}

// wantInMarkdown checks that results.md of res has every line of want.
func wantInMarkdown(t *testing.T, res *runner.Results, want ...string) {
	t.Helper()
	md, err := chatcoreMarkdown(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		if !strings.Contains(md, w) {
			t.Errorf("results.md lacks %q:\n%s", w, md)
		}
	}
}

func TestChatcoreMarkdownMeetsTheGoal(t *testing.T) {
	res := chatcoreResults(
		chatcoreRow(1, 5, 0, 3000), chatcoreRow(1, 450, 0, 4000),
		chatcoreRow(2, 5, 0, 90000), chatcoreRow(2, 450, 0, 6000),
		chatcoreRow(3, 5, 0, 3500), chatcoreRow(3, 450, 0, 4500),
	)
	wantInMarkdown(t, res,
		"| Run | Clients | Sent | Failed | p50 (µs) | p95 (µs) | p99 (µs) | max (µs) | server CPU (s) | tester CPU (s) | load |",
		"| 2 | 450 | 4050 | 0 | 1000 | 2000 | 6000 | 9000 | 1.50 | 0.25 | 1.00 2.00 3.00 |",
		"and median p99 < 50 ms: **450**.",
		"At 450 clients: 0 failed in every run: true; median p99 4500 µs: p99 ≤ 5 ms **met**.",
	)
}

// One message lost in one run, or a run whose logins did not fit, is enough
// to miss the goal: "0 failed" is asked of every run.
func TestChatcoreMarkdownEveryRunCounts(t *testing.T) {
	failedRun := chatcoreRow(3, 450, 0, 0)
	failedRun.Values = map[string]float64{"cpu_s": 4.2, "tester_cpu_s": 0.5}
	failedRun.Err = "[Server::Error][tester7] request timed out after 10s"
	res := chatcoreResults(
		chatcoreRow(1, 5, 0, 3000), chatcoreRow(1, 100, 1, 3000), chatcoreRow(1, 450, 0, 4000),
		chatcoreRow(2, 5, 0, 3000), chatcoreRow(2, 100, 0, 3000), chatcoreRow(2, 450, 0, 4000),
		chatcoreRow(3, 5, 0, 3000), chatcoreRow(3, 100, 0, 3000), failedRun,
	)
	wantInMarkdown(t, res,
		"| 3 | 450 | — | — | — | — | — | — | 4.20 | 0.50 | ? |",
		"Run 3, 450 clients did not run: [Server::Error][tester7] request timed out after 10s",
		"and median p99 < 50 ms: **5**.",
		"At 450 clients: 0 failed in every run: false; median p99 4000 µs: p99 ≤ 5 ms **not met**.",
	)
}

// A step that cannot start still reports what it cost the tester and how
// busy the machine was.
func TestChatcoreTrialWithoutServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nobody listens there now
	tr := &runner.Trial{Server: "none", Clients: 2, Addr: addr, Log: io.Discard}
	out, err := chatcoreTrial(context.Background(), tr, chatcoreSettings{})
	if err == nil || !strings.Contains(err.Error(), "Unable to connect") {
		t.Fatalf("chatcoreTrial without a server: %v, want the original's \"Unable to connect\"", err)
	}
	if runtime.GOOS != "linux" {
		return
	}
	for _, k := range []string{"tester_cpu_s", "load1", "load5", "load15"} {
		if _, ok := out.Values[k]; !ok {
			t.Errorf("no %s in %v", k, out.Values)
		}
	}
	if _, ok := out.Values["p99_us"]; ok {
		t.Errorf("a step that did not run has a p99: %v", out.Values)
	}
}
