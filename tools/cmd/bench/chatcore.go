package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"serverlab/tools/internal/chatcoreload"
	"serverlab/tools/internal/procstat"
	"serverlab/tools/internal/runner"
)

// The chatcore experiment is chapter 07's: the original chatcore load
// tester's table (package chatcoreload, as loadgen chatcore prints it) for
// the course's server, with what a table of latencies alone cannot tell: the
// CPU seconds the server and the load tester each took per step, and how
// busy the machine was.
//
//	make bench-chatcore    (go run ./tools/cmd/bench chatcore -runs 3 -out docs/chatcore-bench)
//
// A run is one server process on a fresh database, and the steps (client
// counts) run one after another on it, as the original's tester run with
// -steps does: users created in an earlier step are reused. -runs repeats
// the whole ladder, each time on a new server and database, so that one
// noisy run does not decide the verdicts; with several -servers, the runs
// alternate between them (the runner's KeepServer).
func init() {
	register(experiment{
		name:    "chatcore",
		summary: "chapter 07's: the original chatcore load tester's table, 5 to 450 clients, server and tester CPU per step",
		run:     runChatcore,
	})
}

// chatcoreSettings are one step's, the original's by default.
type chatcoreSettings struct {
	duration, interval, timeout time.Duration
	// strict is the original's tester on errors (chatcoreload.Config.Strict):
	// the first tester that cannot get ready fails the step.
	strict bool
}

// chatcoreGoal is the at 450 clients: 0 failed and p99 ≤ 5 ms; the
// largest client count with 0 failed and p99 under chatcoreUsable is
// reported beside it.
const (
	chatcoreGoalClients = 450
	chatcoreGoalP99     = 5 * time.Millisecond
	chatcoreUsable      = 50 * time.Millisecond
)

func runChatcore(ctx context.Context, args []string) error {
	f := newFlags("chatcore", "docs/chatcore-bench", 3)
	f.IntVar(&f.rounds, "runs", 3, "the same as -rounds: whole ladders, each on a fresh server and database")
	serverList := f.String("servers", "ch07=./"+tree()+"/07/cmd/chatcore-server",
		"chatcore servers, `label=package,…`; a label=path to a built program runs it as it is (e.g. the original, built elsewhere)")
	serverArgs := f.String("server-args", "", "extra flags for every server, space-separated, e.g. \"-hash-memory 4096 -hash-time 1\"")
	steps := f.String("steps", chatcoreload.DefaultSteps, "client counts, one step each, in this order on one server")
	var s chatcoreSettings
	f.DurationVar(&s.duration, "duration", chatcoreload.DefaultDuration, "how long the testers send in each step, from the last one ready (the original: 10s)")
	f.DurationVar(&s.interval, "interval", chatcoreload.DefaultInterval, "between one tester's messages (the original: 1s)")
	f.DurationVar(&s.timeout, "timeout", chatcoreload.DefaultTimeout, "limit on each request (the original: 10s)")
	f.BoolVar(&s.strict, "strict", true, "the original's tester on errors: the first login, join or request that fails ends the step with no result; -strict=false counts such testers not ready and runs the others")
	if err := f.parse(args); err != nil {
		return err
	}
	if f.peers != "" {
		// The original chatcore is no part of the peers layout: it is
		// named with -servers.
		fmt.Fprintln(os.Stderr, "bench chatcore: -peers has no chatcore original: name one with -servers label=path")
		f.peers = ""
	}
	counts, err := chatcoreload.ParseSteps(*steps)
	if err != nil {
		return f.fail(err)
	}
	// The flags both the course's server and the original's take; "error" is
	// the quietest log level both know.
	serverFlags := append([]string{"--ip", "127.0.0.1", "--port", "{port}", "--db", "{dir}/bench.db", "--log", "error"},
		strings.Fields(*serverArgs)...)
	servers, err := parseServers(*serverList, serverFlags)
	if err != nil {
		return f.fail(err)
	}
	for i, srv := range servers {
		if st, err := os.Stat(srv.Pkg); err == nil && st.Mode().IsRegular() {
			servers[i].Bin, servers[i].Pkg = srv.Pkg, ""
		}
	}
	e := chatcoreExperiment(f.command(), servers, counts, f.rounds, s)
	res, err := e.Run(ctx)
	if err != nil {
		return err
	}
	return writeChatcore(f.out, res)
}

// chatcoreExperiment is the experiment: every server × the steps, each run
// (round) of a server on one process.
func chatcoreExperiment(command string, servers []runner.Server, counts []int, runs int, s chatcoreSettings) runner.Experiment {
	compare := len(servers) > 1 // ratios to the first server
	return runner.Experiment{
		Name:       "chatcore",
		Command:    command,
		Servers:    servers,
		Clients:    counts,
		Rounds:     runs,
		KeepServer: true,
		// Each sample reads the server's smaps_rollup, a walk of its page
		// tables charged to this process, the tester: every 250 ms it adds
		// 0.15 s to a step's tester CPU of 0.03 s at 5 clients. A few
		// samples per step still give the memory peaks.
		SampleEvery: 5 * time.Second,
		Trial: func(ctx context.Context, t *runner.Trial) (runner.Outcome, error) {
			return chatcoreTrial(ctx, t, s)
		},
		Table: []runner.Column{
			{Key: "failed", Title: "failed"},
			{Key: "p50_us", Title: "p50 µs", Ratio: compare},
			{Key: "p99_us", Title: "p99 µs", Ratio: compare},
			{Key: "cpu_s", Title: "server CPU s", Ratio: compare},
			{Key: "tester_cpu_s", Title: "tester CPU s"},
		},
		Plots: []runner.Plot{
			{File: "latency.png", Title: "chatcore: echo latency (the original's method), median over the runs",
				Y: "ms (log scale)", Keys: []string{"p50_us", "p99_us"}, Names: []string{"p50", "p99"}, Scale: 0.001, LogY: true},
			{File: "cpu.png", Title: "chatcore: CPU per step (user+system), median over the runs",
				Y: "CPU seconds per step", Keys: []string{"cpu_s", "tester_cpu_s"}, Names: []string{"server", "tester"}},
		},
	}
}

// chatcoreTrial runs one step: the original's method with t.Clients
// testers, in this process, whose CPU is the tester's. Its values: sent,
// completed, failed, the original's percentiles in µs (p50_us, p95_us,
// p99_us, max_us), tester_cpu_s and the load average at the start (load1,
// load5, load15); the runner adds the server's CPU (cpu_s). The CPU and the
// load are kept when the step fails, as a login storm that does not fit is
// itself a finding.
func chatcoreTrial(ctx context.Context, t *runner.Trial, s chatcoreSettings) (runner.Outcome, error) {
	v := loadAverage()
	self, selfErr := procstat.Read(os.Getpid())
	res, err := chatcoreload.Run(ctx, chatcoreload.Config{Addr: t.Addr, Clients: t.Clients,
		Duration: s.duration, Interval: s.interval, Timeout: s.timeout, Strict: s.strict, Logf: t.Logf})
	if now, nowErr := procstat.Read(os.Getpid()); selfErr == nil && nowErr == nil {
		v["tester_cpu_s"] = float64(now.CPUTicks-self.CPUTicks) / procstat.ClockTicks
	}
	// How long the registrations took, kept when the step fails: a burst
	// refused is measured too.
	for k, d := range map[string]time.Duration{"reg_p50_ms": res.Register.P50, "reg_p99_ms": res.Register.P99,
		"reg_max_ms": res.Register.Max, "login_p99_ms": res.Login.P99} {
		if res.Register.N > 0 {
			v[k] = float64(d.Microseconds()) / 1000
		}
	}
	if err != nil { // a login storm's errors, one a line: one line for the table
		return runner.Outcome{Values: v}, errors.New(strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	if res.NotReady > 0 { // as when every tester failed: the step is a login storm that did not fit
		return runner.Outcome{Values: v}, fmt.Errorf("%d of %d testers not ready: %s", res.NotReady, t.Clients, strings.ReplaceAll(res.NotReadyErr.Error(), "\n", "; "))
	}
	v["sent"], v["completed"], v["failed"] = float64(res.Sent), float64(res.Completed), float64(res.Failed())
	v["successes"] = float64(res.Completed) // so that the runner adds the server's cpu_us_per_op: per echo
	if res.Completed > 0 {                  // no samples: no latencies (and no 0 on a log axis)
		for k, d := range map[string]time.Duration{"p50_us": res.P50, "p95_us": res.P95, "p99_us": res.P99, "max_us": res.Max} {
			v[k] = float64(d.Microseconds())
		}
	}
	t.Logf("sent %d, failed %d, p50 %v, p99 %v, tester CPU %.2f s", res.Sent, res.Failed(), res.P50, res.P99, v["tester_cpu_s"])
	return runner.Outcome{Values: v, Latency: res.HDR.Latency}, nil
}

// loadAverage is /proc/loadavg's first three fields (none elsewhere).
func loadAverage() map[string]float64 {
	v := map[string]float64{}
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return v
	}
	for i, field := range strings.Fields(string(b)) {
		if i >= 3 {
			break
		}
		if x, err := strconv.ParseFloat(field, 64); err == nil {
			v[[]string{"load1", "load5", "load15"}[i]] = x
		}
	}
	return v
}

// writeChatcore writes the runner's files into dir (results.csv with every
// step of every run, the plots), then replaces its results.md with the
// chapter's: the original's table per run, the verdicts, and the runner's
// medians after them.
func writeChatcore(dir string, res *runner.Results) error {
	if err := runner.WriteFiles(dir, res); err != nil {
		return err
	}
	md, err := chatcoreMarkdown(res)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "results.md"), []byte(md), 0o644)
}

// chatcoreMarkdown is results.md: per server, the original's table with
// every step of every run, and the verdicts; then the runner's table of
// medians (and ratios, with several servers).
func chatcoreMarkdown(res *runner.Results) (string, error) {
	var b strings.Builder
	host, _ := os.Hostname()
	fmt.Fprintf(&b, "# chatcore: the original's load test against chapter 07's server\n\n")
	fmt.Fprintf(&b, "Made by `%s` on %s, %d CPUs, %s.\n", res.Command, host, runtime.NumCPU(), time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(&b, "Server and load tester on the same machine, loopback, nothing pinned. Each run is a fresh server on a fresh\n")
	fmt.Fprintf(&b, "database, the steps one after another on it. CPU = user+system seconds during the step, from /proc (the\n")
	fmt.Fprintf(&b, "tester's is the bench process's); load = /proc/loadavg at its start.\n")
	for _, server := range res.Servers {
		fmt.Fprintf(&b, "\n## %s\n\n", server)
		chatcoreTable(&b, res, server)
		chatcoreVerdicts(&b, res, server)
	}
	b.WriteString("\n## Medians over the runs\n\n")
	if err := res.WriteMarkdown(&b); err != nil {
		return "", err
	}
	return b.String(), nil
}

func chatcoreTable(b *strings.Builder, res *runner.Results, server string) {
	b.WriteString("| Run | Clients | Sent | Failed | p50 (µs) | p95 (µs) | p99 (µs) | max (µs) | server CPU (s) | tester CPU (s) | load |\n")
	b.WriteString("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
	var failures []string
	for _, r := range res.Rows {
		if r.Server != server {
			continue
		}
		cols := []string{strconv.Itoa(r.Round), strconv.Itoa(r.Clients)}
		for _, k := range []string{"sent", "failed", "p50_us", "p95_us", "p99_us", "max_us"} {
			cols = append(cols, integer(r, k))
		}
		cols = append(cols, seconds(r, "cpu_s"), seconds(r, "tester_cpu_s"), loadCell(r))
		fmt.Fprintf(b, "| %s |\n", strings.Join(cols, " | "))
		if r.Err != "" {
			failures = append(failures, fmt.Sprintf("Run %d, %d clients did not run: %s", r.Round, r.Clients, r.Err))
		}
	}
	for _, f := range failures {
		fmt.Fprintf(b, "\n%s\n", f)
	}
}

func integer(r runner.Row, key string) string {
	if v, ok := r.Values[key]; ok && r.Err == "" {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return "—"
}

func seconds(r runner.Row, key string) string {
	if v, ok := r.Values[key]; ok {
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return "—"
}

func loadCell(r runner.Row) string {
	var fields []string
	for _, k := range []string{"load1", "load5", "load15"} {
		if v, ok := r.Values[k]; ok {
			fields = append(fields, strconv.FormatFloat(v, 'f', 2, 64))
		}
	}
	if len(fields) == 0 {
		return "?"
	}
	return strings.Join(fields, " ")
}

// chatcoreVerdicts writes the two: at 450 clients, 0 failed in every
// run and the median p99 against the goal; and the largest client count
// with 0 failed in every run and median p99 under 50 ms.
func chatcoreVerdicts(b *strings.Builder, res *runner.Results, server string) {
	largest := 0
	var atGoal string
	for _, c := range res.Cells() {
		clean := true // every run of this step ran and lost nothing
		for _, r := range res.Rows {
			if r.Server == server && r.Clients == c.Clients && (r.Err != "" || r.Values["failed"] != 0) {
				clean = false
			}
		}
		p99, n := res.Median(server, c, "p99_us")
		med := time.Duration(p99) * time.Microsecond
		if n > 0 && clean && med < chatcoreUsable {
			largest = max(largest, c.Clients)
		}
		if c.Clients != chatcoreGoalClients {
			continue
		}
		if n == 0 {
			atGoal = "no run got past its logins: p99 ≤ 5 ms **not met**"
			continue
		}
		met := "**not met**"
		if clean && med <= chatcoreGoalP99 {
			met = "**met**"
		}
		atGoal = fmt.Sprintf("0 failed in every run: %v; median p99 %d µs: p99 ≤ 5 ms %s", clean, med.Microseconds(), met)
	}
	fmt.Fprintf(b, "\nLargest client count with 0 failed (every run) and median p99 < 50 ms: **%d**.\n", largest)
	if atGoal != "" {
		fmt.Fprintf(b, "At %d clients: %s.\n", chatcoreGoalClients, atGoal)
	}
}
