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
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"serverlab/tools/internal/procs"
	"serverlab/tools/internal/runner"
)

// The stock experiment is chapter 04's (and chapter 05's stock server): the
// pre-threaded server with its lock granularities against the event loop and
// against the originals, the sg20180546 stock servers (thread-based with the
// same worker count, event-driven), driven by the original's own client.
//
//	make bench-ch04        (go run ./tools/cmd/bench stock -out docs/bench-ch04)
//	PEERS=/path make bench-ch04
//
// With -peers (default $PEERS) the originals built in the peers folder run
// too (stockOriginals), and every server is driven by the original's
// multiclient_benchmark: one process per client, each sending
// show / buy / sell at random, one at a time, reading the 8192-byte reply.
// Without it, the course's servers are driven by loadgen's stock driver.
//
// The knob is the stock file: ten stocks with -shares shares each. With few
// shares some buys find too few left and get a shorter reply; with a million
// none can fail. The original's write-up measured both; so does this.
func init() {
	register(experiment{
		name:    "stock",
		summary: "chapter 04: pre-threaded stock server (workers, -lock) vs chapter 05's event loop and the originals",
		run:     runStockBench,
	})
}

// stockSettings are what every trial of the experiment shares.
type stockSettings struct {
	queries int
	mcb     string // the original's multiclient_benchmark; "" = loadgen
	loadgen string // the built loadgen, when mcb is ""
	timeout time.Duration
}

func runStockBench(ctx context.Context, args []string) error {
	f := newFlags("stock", "docs/bench-ch04", 3)
	queries := f.Int("queries", 100000, "queries per trial, split evenly over the clients (the original's benchmark: total_order)")
	clientList := f.String("clients", "16,64", "client `counts`, comma-separated")
	shareList := f.String("shares", "100000,1000000", "shares per stock in the stock file, one cell per `value`, comma-separated")
	workers := f.Int("workers", 4, "workers of the pre-threaded servers (ours and the original's thread-based)")
	timeout := f.Duration("timeout", 3*time.Minute, "give up on a trial after this long (a server that hangs)")
	only := f.String("servers", "", "run only these `servers`, comma-separated (default: all of ch04 ch04-tree ch04-2P ch05, and thread event with -peers)")
	if err := f.parse(args); err != nil {
		return err
	}
	usage := func(err error) error {
		fmt.Fprintln(f.Output(), err)
		return usageError{err}
	}
	counts, err := parseCounts(*clientList)
	if err != nil {
		return usage(err)
	}
	shares, err := stockShares(*shareList)
	if err != nil {
		return usage(err)
	}
	if *workers < 1 || *queries < 1 {
		return usage(errors.New("-workers and -queries must be at least 1"))
	}
	s := stockSettings{queries: *queries, timeout: *timeout}

	servers := stockOurServers(*workers)
	if f.peers != "" {
		s.mcb = f.peer("sg-syssw/concurrent_stockserver/client/multiclient_benchmark")
		servers = append(servers, stockOriginals(f, *workers)...)
	}
	servers, err = stockSelect(servers, *only)
	if err != nil {
		return usage(err)
	}
	bin, err := os.MkdirTemp("", "bench-stock-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(bin)
	if s.mcb == "" {
		s.loadgen = filepath.Join(bin, "loadgen")
		if err := procs.Build(ctx, "", "./tools/cmd/loadgen", s.loadgen, os.Stderr); err != nil {
			return fmt.Errorf("building loadgen: %w", err)
		}
	}
	baseline := servers[0].Name
	for _, sv := range servers {
		if sv.Name == "thread" {
			baseline = "thread"
		}
	}
	e := runner.Experiment{
		Name:     "stock",
		Command:  f.command(),
		Servers:  servers,
		Baseline: baseline,
		Clients:  counts,
		KnobName: "shares",
		Knobs:    shares,
		Rounds:   f.rounds,
		Setup: func(t *runner.Trial) error {
			return stockWriteFile(filepath.Join(t.Dir, "stock.txt"), t.Knob)
		},
		Trial: func(ctx context.Context, t *runner.Trial) (runner.Outcome, error) {
			return stockTrial(ctx, t, s)
		},
		Table: []runner.Column{
			{Key: "throughput_rps", Title: "queries/s", Ratio: true},
			{Key: "cpu_us_per_op", Title: "CPU µs/query", Ratio: true},
			{Key: "user_us_per_q", Title: "user µs/query"},
			{Key: "sys_us_per_q", Title: "system µs/query"},
			{Key: "cs_per_q", Title: "context switches/query"},
		},
		Plots: []runner.Plot{
			{File: "throughput.png", Title: "Throughput, " + stockClientName(s), Y: "queries/s", Keys: []string{"throughput_rps"}, Bars: true},
			{File: "cpu_per_query.png", Title: "Server CPU per query (utime+stime)", Y: "CPU µs per query", Keys: []string{"cpu_us_per_op"}, Bars: true},
		},
	}
	res, err := e.Run(ctx)
	if err != nil {
		return err
	}
	if err := runner.WriteFiles(f.out, res); err != nil {
		return err
	}
	return stockWriteGoals(filepath.Join(f.out, "goals.md"), res, f.peers != "")
}

// stockOurServers are the course's stock servers: the pre-threaded one with
// one P (-procs 1, -lock stock), with the tree lock, and as it starts by
// default (ch04-2P: Go's default GOMAXPROCS, one P per core); and chapter
// 05's event loop.
func stockOurServers(workers int) []runner.Server {
	w := strconv.Itoa(workers)
	ch04 := "./" + tree() + "/04/cmd/stockserver"
	args := func(extra ...string) []string {
		return append(append([]string{"-addr", "127.0.0.1", "-file", "stock.txt"}, extra...), "{port}", w)
	}
	return []runner.Server{
		{Name: "ch04", Pkg: ch04, Args: args("-lock", "stock", "-procs", "1")},
		{Name: "ch04-tree", Pkg: ch04, Args: args("-lock", "tree", "-procs", "1")},
		{Name: "ch04-2P", Pkg: ch04, Args: args("-lock", "stock", "-procs", "0")},
		{Name: "ch05", Pkg: "./" + tree() + "/05/cmd/stockserver", Args: []string{"-addr", "127.0.0.1", "-file", "stock.txt", "{port}"}},
	}
}

// stockOriginals returns the original servers built in the peers folder:
// "thread" (the thread-based one, with workers threads) and "event" (the
// select() loop); one that is not there is left out, with a message.
//
// They must be built as their own Makefiles build them, without
// optimisation: the thread-based server's reader-writer lock busy-waits on
// plain ints (`while(writer_n);`), and with -O2 the compiler may read such a
// variable once and loop forever, which it does here: the first show that
// meets a trade (or the other way round) spins on its core for good and the
// benchmark never ends.
//
// Both run in PRODUCTION mode, as their write-up runs them: BENCHMARK mode
// signals its parent process at start-up (SIGUSR1, for the original's test
// scripts). PRODUCTION prints a line per request to stdout, here /dev/null.
func stockOriginals(f *flags, workers int) []runner.Server {
	var out []runner.Server
	if bin := f.peer("sg-syssw/concurrent_stockserver/thread_based/stockserver"); bin != "" {
		out = append(out, runner.Server{Name: "thread", Bin: bin, Args: []string{"{port}", "PRODUCTION", strconv.Itoa(workers)}})
	}
	if bin := f.peer("sg-syssw/concurrent_stockserver/event_driven/stockserver"); bin != "" {
		out = append(out, runner.Server{Name: "event", Bin: bin, Args: []string{"{port}", "PRODUCTION"}})
	}
	return out
}

// stockSelect keeps the servers named in list (all of them if it is empty).
func stockSelect(servers []runner.Server, list string) ([]runner.Server, error) {
	if list == "" {
		return servers, nil
	}
	var out []runner.Server
	for name := range strings.SplitSeq(list, ",") {
		i := slices.IndexFunc(servers, func(s runner.Server) bool { return s.Name == strings.TrimSpace(name) })
		if i < 0 {
			return nil, fmt.Errorf("-servers: no server %q here (without -peers there are no originals)", name)
		}
		out = append(out, servers[i])
	}
	return out, nil
}

// stockShares parses -shares.
func stockShares(list string) ([]string, error) {
	var out []string
	for field := range strings.SplitSeq(list, ",") {
		field = strings.TrimSpace(field)
		if n, err := strconv.Atoi(field); err != nil || n < 1 {
			return nil, fmt.Errorf("-shares: %q is not a positive number", field)
		}
		out = append(out, field)
	}
	return out, nil
}

// stockWriteFile writes the stock file of a trial: stocks 1..10 (the
// original's market, and the IDs its benchmark trades), each with shares
// shares, priced id×100.
func stockWriteFile(path, shares string) error {
	var b strings.Builder
	for id := 1; id <= 10; id++ {
		fmt.Fprintf(&b, "%d %s %d\n", id, shares, id*100)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func stockClientName(s stockSettings) string {
	if s.mcb != "" {
		return "the original's multiclient_benchmark"
	}
	return "loadgen stock"
}

// stockTrial runs one benchmark against the running server and reports the
// throughput and the server's cost per query: user and system CPU, and
// context switches, read from /proc before and after.
func stockTrial(ctx context.Context, t *runner.Trial, s stockSettings) (runner.Outcome, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	before, err := stockReadCosts(t.PID)
	if err != nil {
		return runner.Outcome{}, err
	}
	var v map[string]float64
	if s.mcb != "" {
		v, err = stockRunMCB(ctx, t, s)
	} else {
		v, err = stockRunLoadgen(ctx, t, s)
	}
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			err = fmt.Errorf("no result after %v (does the server hang?): %w", s.timeout, err)
		}
		return runner.Outcome{}, err
	}
	after, err := stockReadCosts(t.PID)
	if err != nil {
		return runner.Outcome{}, err
	}
	if n := v["successes"]; n > 0 {
		tick := float64(time.Second/time.Microsecond) / stockClockTicks
		v["user_us_per_q"] = float64(after.utime-before.utime) * tick / n
		v["sys_us_per_q"] = float64(after.stime-before.stime) * tick / n
		v["cs_per_q"] = float64(after.switches-before.switches) / n
	}
	return runner.Outcome{Values: v}, nil
}

// stockClockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on every
// Linux the course runs on.
const stockClockTicks = 100

// stockRunMCB runs the original's multiclient_benchmark. It prints nothing
// when all goes well (its csapp wrappers print an error and exit 0 when a
// connection or a read fails), so anything it prints is a failure; its
// clock is the wall time from the first fork to the last wait, as the
// write-up measured it.
func stockRunMCB(ctx context.Context, t *runner.Trial, s stockSettings) (map[string]float64, error) {
	host, port, err := net.SplitHostPort(t.Addr)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, s.mcb, host, port, strconv.Itoa(t.Clients), strconv.Itoa(s.queries))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return nil, fmt.Errorf("multiclient_benchmark: %w: %s", err, bytes.TrimSpace(out.Bytes()))
	}
	if out.Len() > 0 {
		return nil, fmt.Errorf("multiclient_benchmark failed: %s", stockFirstLine(out.Bytes()))
	}
	n := float64(s.queries / t.Clients * t.Clients) // each client sends total/clients
	return map[string]float64{"successes": n, "throughput_rps": n / wall.Seconds()}, nil
}

// stockRunLoadgen runs loadgen's stock driver (goroutine clients, the same
// random mix, every reply checked) and reads its JSON result.
func stockRunLoadgen(ctx context.Context, t *runner.Trial, s stockSettings) (map[string]float64, error) {
	cmd := exec.CommandContext(ctx, s.loadgen, "stock", "-addr", t.Addr, "-clients", strconv.Itoa(t.Clients),
		"-queries", strconv.Itoa(s.queries), "-json")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("loadgen: %w: %s", err, stockFirstLine(stderr.Bytes()))
	}
	var r struct {
		Successes  float64 `json:"successes"`
		Failures   float64 `json:"failures"`
		Throughput float64 `json:"throughput_rps"`
		P99        float64 `json:"p99_ms"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return nil, fmt.Errorf("loadgen's result: %w", err)
	}
	if r.Failures > 0 {
		return nil, fmt.Errorf("loadgen: %v of %v queries failed", r.Failures, r.Successes+r.Failures)
	}
	return map[string]float64{"successes": r.Successes, "failures": r.Failures,
		"throughput_rps": r.Throughput, "p99_ms": r.P99}, nil
}

func stockFirstLine(b []byte) string {
	line, _, _ := bytes.Cut(bytes.TrimSpace(b), []byte("\n"))
	return string(line)
}

// stockCosts are a process's CPU times and context switches so far.
type stockCosts struct {
	utime, stime uint64 // clock ticks
	switches     uint64 // voluntary and involuntary, all threads
}

// stockReadCosts reads /proc/<pid>/stat (utime, stime: fields 14 and 15) and
// every thread's voluntary and nonvoluntary context switches.
func stockReadCosts(pid int) (stockCosts, error) {
	var c stockCosts
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return c, err
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(fields) < 13 {
		return c, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	c.utime, _ = strconv.ParseUint(fields[14-3], 10, 64)
	c.stime, _ = strconv.ParseUint(fields[15-3], 10, 64)
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	for _, path := range tasks {
		status, err := os.ReadFile(path)
		if err != nil {
			continue // the thread has just exited
		}
		for line := range strings.SplitSeq(string(status), "\n") {
			key, value, _ := strings.Cut(line, ":")
			if key == "voluntary_ctxt_switches" || key == "nonvoluntary_ctxt_switches" {
				n, _ := strconv.ParseUint(strings.TrimSpace(value), 10, 64)
				c.switches += n
			}
		}
	}
	return c, nil
}

// stockWriteGoals writes goals.md: chapter 04's goal (throughput ≥ 1.1× the
// thread-based original with the same workers, server CPU per query ≤ 0.67×)
// and chapter 05's (the same against the event-driven original), per cell,
// from the medians of this run.
func stockWriteGoals(path string, res *runner.Results, peers bool) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Stock servers against the originals: the goals\n\n`%s`\n\n", res.Command)
	if !peers {
		b.WriteString("Run with PEERS= (the originals built) to compare with them.\n")
		return os.WriteFile(path, []byte(b.String()), 0o644)
	}
	b.WriteString("Medians of the interleaved rounds; a ratio is ours / the original's. Goal: throughput ≥ 1.10, CPU per query ≤ 0.67.\n\n")
	b.WriteString("| ours vs original | shares | clients | queries/s (ours / original) | throughput ratio | CPU µs/query (ours / original) | CPU ratio | met |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, pair := range [][2]string{{"ch04", "thread"}, {"ch04-2P", "thread"}, {"ch05", "event"}} {
		for _, c := range res.Cells() {
			q, _ := res.Median(pair[0], c, "throughput_rps")
			qo, _ := res.Median(pair[1], c, "throughput_rps")
			u, _ := res.Median(pair[0], c, "cpu_us_per_op")
			uo, _ := res.Median(pair[1], c, "cpu_us_per_op")
			met := "yes"
			if !(q/qo >= 1.1 && u/uo <= 0.67) {
				met = "no"
			}
			fmt.Fprintf(&b, "| %s vs %s | %s | %d | %.1fk / %.1fk | %.2f | %.1f / %.1f | %.2f | %s |\n",
				pair[0], pair[1], c.Knob, c.Clients, q/1000, qo/1000, q/qo, u, uo, u/uo, met)
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
