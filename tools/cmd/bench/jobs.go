package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"serverlab/tools/internal/load"
	"serverlab/tools/internal/runner"
)

// The jobs experiment measures chapter 03's job server against ThreadForge,
// the C++ original it re-creates, on the original's four workloads (prime,
// sort, matmul, mixed) at 10 and 50 clients, with the same number of workers.
// With -peers both servers are driven by the original's own client,
// ThreadForge's load_test (its output parsed); without, ch03 alone is driven
// by the course's copy of it, loadgen's jobs mode. Servers alternate cell by
// cell (A B, B A, …) and the tables show medians.
//
//	make bench-ch03        (go run ./tools/cmd/bench jobs -out docs/bench-ch03 -peers $PEERS)
func init() {
	register(experiment{
		name:    "jobs",
		summary: "ch03 job server vs ThreadForge (-peers): prime/sort/matmul/mixed at 10 and 50 clients, ThreadForge's load_test",
		run:     runJobs,
	})
}

// jobWorkloads are the original load_test's workloads, in its order.
var jobWorkloads = []string{"prime", "sort", "matmul", "mixed"}

func runJobs(ctx context.Context, args []string) error {
	f := newFlags("jobs", "docs/bench-ch03", 3)
	serverList := f.String("servers", "ch03=./"+tree()+"/03/cmd/jobserver",
		"the course's job servers, `label=package,…`; a label=path to a built program runs it as it is (e.g. an older build, to compare)")
	workers := f.Int("workers", 2, "worker threads of both servers")
	queue := f.Int("queue", 1024, "job queue capacity of both servers")
	perClient := f.Int("requests-per-client", 300, "requests per client (the original load_test's flag)")
	clientList := f.String("clients", "10,50", "client counts, comma-separated")
	workloadList := f.String("workloads", strings.Join(jobWorkloads, ","), "workloads, comma-separated: prime, sort, matmul, mixed")
	procs := f.Int("gomaxprocs", 0, "also run the first server with GOMAXPROCS=`n` (0: not), to see what more Ps than cores change on a loaded machine")
	if err := f.parse(args); err != nil {
		return err
	}
	clients, err := parseCounts(*clientList)
	if err != nil {
		return usageError{err}
	}
	workloads, err := parseWorkloads(*workloadList)
	if err != nil {
		return usageError{err}
	}
	w, q := strconv.Itoa(*workers), strconv.Itoa(*queue)
	servers, err := parseServers(*serverList, []string{"-addr", "{addr}", "-workers", w, "-queue", q})
	if err != nil {
		return usageError{err}
	}
	for i, s := range servers {
		if st, err := os.Stat(s.Pkg); err == nil && st.Mode().IsRegular() {
			servers[i].Bin, servers[i].Pkg = s.Pkg, ""
		}
	}
	if *procs > 0 {
		extra := servers[0]
		extra.Name = fmt.Sprintf("%s-procs%d", extra.Name, *procs)
		extra.Env = []string{"GOMAXPROCS=" + strconv.Itoa(*procs)}
		servers = append(servers, extra)
	}
	baseline := ""
	var drive func(ctx context.Context, t *runner.Trial) (runner.Outcome, error)
	if bin, loadTest := f.peer("threadforge/build/threadforge_server"), f.peer("threadforge/build/load_test"); bin != "" && loadTest != "" {
		// The original binds every interface; the runner gives it a free port.
		servers = append(servers, runner.Server{Name: "threadforge", Bin: bin, Args: []string{"{port}", w, q}})
		baseline = "threadforge"
		drive = func(ctx context.Context, t *runner.Trial) (runner.Outcome, error) {
			return loadTestTrial(ctx, loadTest, t, *perClient)
		}
	} else {
		built, cleanup, err := build(ctx, []runner.Server{{Name: "loadgen", Pkg: "./tools/cmd/loadgen"}})
		if err != nil {
			return err
		}
		defer cleanup()
		fmt.Fprintln(os.Stderr, "bench jobs: no ThreadForge under -peers: measuring ch03 alone, with loadgen jobs")
		drive = func(ctx context.Context, t *runner.Trial) (runner.Outcome, error) {
			return loadgenTrial(ctx, built[0].Bin, t, *perClient)
		}
	}
	servers, cleanup, err := build(ctx, servers)
	if err != nil {
		return err
	}
	defer cleanup()
	// One experiment per workload, so that each has its own table and plots
	// (bars: one group per client count, one bar per server).
	var results []*runner.Results
	for _, wl := range workloads {
		e := runner.Experiment{
			Name:     "jobs-" + wl,
			Command:  f.command(),
			Servers:  servers,
			Baseline: baseline,
			Clients:  clients,
			KnobName: "workload",
			Knobs:    []string{wl},
			Rounds:   f.rounds,
			Trial:    drive,
			Table: []runner.Column{
				{Key: "throughput_rps", Title: "req/s", Ratio: true},
				{Key: "p50_ms", Title: "p50 ms", Ratio: true},
				{Key: "p99_ms", Title: "p99 ms", Ratio: true},
				{Key: "cpu_us_per_op", Title: "server CPU µs/req", Ratio: true},
				{Key: "failures", Title: "failed"},
			},
			Plots: []runner.Plot{
				{File: wl + "-throughput.png", Title: strings.ToUpper(wl) + ": throughput, " + w + " workers", Y: "requests/s",
					Keys: []string{"throughput_rps"}, Bars: true},
				{File: wl + "-p99.png", Title: strings.ToUpper(wl) + ": p99 latency, " + w + " workers", Y: "ms",
					Keys: []string{"p99_ms"}, Bars: true},
				{File: wl + "-cpu.png", Title: strings.ToUpper(wl) + ": server CPU per request (utime+stime)", Y: "µs",
					Keys: []string{"cpu_us_per_op"}, Bars: true},
			},
		}
		res, err := e.Run(ctx)
		if err != nil {
			return err
		}
		results = append(results, res)
	}
	return runner.WriteFiles(f.out, results...)
}

func parseWorkloads(s string) ([]string, error) {
	var out []string
	for field := range strings.SplitSeq(s, ",") {
		w := strings.TrimSpace(field)
		if !isWorkload(w) {
			return nil, fmt.Errorf("-workloads: %q is not one of %s", w, strings.Join(jobWorkloads, ", "))
		}
		out = append(out, w)
	}
	return out, nil
}

func isWorkload(w string) bool {
	for _, known := range jobWorkloads {
		if w == known {
			return true
		}
	}
	return false
}

// loadTestTrial runs ThreadForge's load_test against t's server and returns
// what it printed. load_test exits with 2 when a request failed; the counts
// are in its output all the same, so that is not an error here.
func loadTestTrial(ctx context.Context, loadTest string, t *runner.Trial, perClient int) (runner.Outcome, error) {
	host, port, err := net.SplitHostPort(t.Addr)
	if err != nil {
		return runner.Outcome{}, err
	}
	cmd := exec.CommandContext(ctx, loadTest, "--host", host, "--port", port,
		"--clients", strconv.Itoa(t.Clients), "--requests-per-client", strconv.Itoa(perClient), "--workload", t.Knob)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if exit := (*exec.ExitError)(nil); err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 2) {
		return runner.Outcome{}, fmt.Errorf("load_test: %v: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	values, err := parseLoadTest(out)
	if err != nil {
		return runner.Outcome{}, err
	}
	t.Logf("load_test: %.0f req/s, p99 %.2f ms, %.0f failed", values["throughput_rps"], values["p99_ms"], values["failures"])
	return runner.Outcome{Values: values}, nil
}

// loadTestColumns are the fields of load_test's "csv=" line, in its order,
// under the runner's names.
var loadTestColumns = []string{"requests", "successes", "failures", "wall_s", "throughput_rps",
	"mean_ms", "p50_ms", "p95_ms", "p99_ms", "max_ms"}

// parseLoadTest reads the "csv=<requests>,<successes>,<failures>,<seconds>,
// <req/s>,<mean>,<p50>,<p95>,<p99>,<max>" line of load_test's output
// (latencies in milliseconds).
func parseLoadTest(out []byte) (map[string]float64, error) {
	for line := range strings.Lines(string(out)) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "csv=")
		if !ok {
			continue
		}
		fields := strings.Split(rest, ",")
		if len(fields) != len(loadTestColumns) {
			return nil, fmt.Errorf("load_test: want %d fields after csv=, got %q", len(loadTestColumns), line)
		}
		values := make(map[string]float64, len(fields))
		for i, field := range fields {
			v, err := strconv.ParseFloat(field, 64)
			if err != nil {
				return nil, fmt.Errorf("load_test: field %s of %q: %v", loadTestColumns[i], line, err)
			}
			values[loadTestColumns[i]] = v
		}
		delete(values, "wall_s") // the runner measures the trial's wall time itself
		return values, nil
	}
	return nil, fmt.Errorf("load_test printed no csv= line: %q", out)
}

// loadgenTrial runs the course's load generator in jobs mode, the original's
// load_test re-created (the same workloads and flags), and reads its JSON
// result.
func loadgenTrial(ctx context.Context, loadgen string, t *runner.Trial, perClient int) (runner.Outcome, error) {
	cmd := exec.CommandContext(ctx, loadgen, "jobs", "-addr", t.Addr, "-clients", strconv.Itoa(t.Clients),
		"-requests-per-client", strconv.Itoa(perClient), "-workload", t.Knob, "-quiet", "-json")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var res load.Result
	if jerr := json.Unmarshal(out, &res); jerr != nil {
		if err == nil {
			err = jerr
		}
		return runner.Outcome{}, fmt.Errorf("loadgen jobs: %v: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	return runner.Outcome{Values: runner.LoadValues(res), Latency: res.Latency}, nil
}
