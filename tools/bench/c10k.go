package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"serverlab/tools/bench/runner"
	"serverlab/tools/monitor/procstat"
)

// The c10k experiment is chapter 05's: the original chat write-up's
// performance analysis (CPU%, VmRSS, PSS and delivery latency vs clients)
// extended to C10K, chapter 02's goroutine-per-client server against
// chapter 05's epoll loop.
//
//	make bench-ch05        (go run ./tools/bench c10k -out docs/bench-ch05)
//
// Each trial logs N clients in, measures the server idle for -idle (CPU%,
// RSS, PSS), then makes the clients take turns broadcasting -rate messages a
// second for -active, every receiver timing every delivery.
func init() {
	register(experiment{
		name:    "c10k",
		summary: "chapter 05's C10K: ch02 vs ch05 chat servers, 2 to 10,000 clients, idle memory and CPU, delivery latency",
		run:     runC10K,
	})
}

// c10kSettings are one trial's phases.
type c10kSettings struct {
	rate         float64 // broadcasts a second, all senders together
	size         int
	idle, active time.Duration
}

func runC10K(ctx context.Context, args []string) error {
	f := newFlags("c10k", "docs/bench-ch05", 1)
	serverList := f.String("servers", "ch02=./solutions/02/cmd/chatserver,ch05=./solutions/05/cmd/chatserver",
		"servers to compare, `label=package,…` (e.g. your ./chapters/05/cmd/chatserver)")
	clientList := f.String("clients", "2,10,100,1000,5000,10000", "client `counts`, comma-separated")
	var s c10kSettings
	f.Float64Var(&s.rate, "rate", 5, "broadcasts per second during the active phase (the senders take turns)")
	f.IntVar(&s.size, "size", 64, "payload bytes per broadcast")
	f.DurationVar(&s.idle, "idle", 3*time.Second, "idle measurement window")
	f.DurationVar(&s.active, "active", 5*time.Second, "active phase")
	if err := f.parse(args); err != nil {
		return err
	}
	counts, err := parseCounts(*clientList)
	if err != nil {
		return usageError{err}
	}
	ours := []string{"-addr", "{addr}", "-users", "{dir}/users.txt", "-login-timeout", "10m"}
	servers, err := parseServers(*serverList, ours)
	if err != nil {
		return usageError{err}
	}
	raiseFDLimit()
	e := runner.Experiment{
		Name:    "c10k",
		Command: f.command(),
		Servers: servers,
		Clients: counts,
		Rounds:  f.rounds,
		Setup: func(t *runner.Trial) error {
			return writeChatUsers(filepath.Join(t.Dir, "users.txt"), t.Clients)
		},
		Trial: func(ctx context.Context, t *runner.Trial) (runner.Outcome, error) {
			return c10kTrial(ctx, t, s)
		},
		Table: []runner.Column{
			{Key: "idle_rss_kib", Title: "RSS idle KiB"},
			{Key: "idle_pss_kib", Title: "PSS idle KiB"},
			{Key: "rss_per_conn_kib", Title: "RSS/conn KiB", Ratio: true},
			{Key: "idle_cpu_pct", Title: "CPU idle %"},
			{Key: "active_cpu_pct", Title: "CPU active %"},
			{Key: "delivered_pct", Title: "delivered %"},
			{Key: "throughput_rps", Title: "deliveries/s"},
			{Key: "p50_ms", Title: "p50 ms"},
			{Key: "p95_ms", Title: "p95 ms"},
			{Key: "p99_ms", Title: "p99 ms", Ratio: true},
			{Key: "cpu_us_per_delivery", Title: "CPU µs/delivery", Ratio: true},
		},
		Plots: []runner.Plot{
			{File: "memory.png", Title: "Server memory with every client idle", Y: "MiB", LogX: true,
				Keys: []string{"idle_rss_kib", "idle_pss_kib"}, Names: []string{"RSS", "PSS"}, Scale: 1.0 / 1024},
			{File: "rss_per_conn.png", Title: "RSS per idle connection", Y: "KiB", LogX: true, Keys: []string{"rss_per_conn_kib"}},
			{File: "cpu.png", Title: "Server CPU", Y: "% of one core", LogX: true,
				Keys: []string{"idle_cpu_pct", "active_cpu_pct"}, Names: []string{"idle", "active"}},
			{File: "latency.png", Title: "Delivery latency (send → each receiver)", Y: "ms", LogX: true,
				Keys: []string{"p50_ms", "p99_ms"}, Names: []string{"p50", "p99"}},
		},
	}
	res, err := e.Run(ctx)
	if err != nil {
		return err
	}
	return runner.WriteFiles(f.out, res)
}

// parseServers reads -servers: label=package pairs, all run with args.
func parseServers(spec string, args []string) ([]runner.Server, error) {
	var out []runner.Server
	for item := range strings.SplitSeq(spec, ",") {
		label, pkg, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok || label == "" || pkg == "" {
			return nil, fmt.Errorf("-servers: want label=package, got %q", item)
		}
		out = append(out, runner.Server{Name: label, Pkg: pkg, Args: args})
	}
	return out, nil
}

func parseCounts(s string) ([]int, error) {
	var out []int
	for field := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || n < 2 {
			return nil, fmt.Errorf("-clients: %q is not a client count of at least 2", field)
		}
		out = append(out, n)
	}
	return out, nil
}

// c10kTrial measures one server with t.Clients clients: idle, then active.
func c10kTrial(ctx context.Context, t *runner.Trial, s c10kSettings) (runner.Outcome, error) {
	v := map[string]float64{}
	base, err := procstat.Read(t.PID)
	if err != nil {
		return runner.Outcome{}, err
	}
	room, err := joinChat(ctx, t.Addr, t.Clients, 30*time.Second)
	if err != nil {
		return runner.Outcome{}, err
	}
	defer room.close()
	loggedIn := len(room.clients)
	v["logged_in"] = float64(loggedIn)
	v["base_rss_kib"] = float64(base.RSSKiB)

	idleStart, err := procstat.Read(t.PID)
	if err != nil {
		return runner.Outcome{}, err
	}
	select {
	case <-time.After(s.idle): // the idle measurement window
	case <-ctx.Done():
		return runner.Outcome{}, ctx.Err()
	}
	idleEnd, err := procstat.Read(t.PID)
	if err != nil {
		return runner.Outcome{}, err
	}
	v["idle_cpu_pct"] = procstat.CPUPercent(idleStart, idleEnd)
	v["idle_rss_kib"], v["idle_pss_kib"] = float64(idleEnd.RSSKiB), float64(idleEnd.PSSKiB)
	v["rss_per_conn_kib"] = float64(idleEnd.RSSKiB-base.RSSKiB) / float64(loggedIn)

	start := time.Now()
	sent := c10kBroadcast(ctx, room, s)
	want := sent * int64(loggedIn-1)
	got := room.await(ctx, want, 5*time.Second)
	after, err := procstat.Read(t.PID)
	if err != nil {
		return runner.Outcome{}, err
	}
	v["active_cpu_pct"] = procstat.CPUPercent(idleEnd, after)
	if got > 0 {
		cpu := float64(after.CPUTicks-idleEnd.CPUTicks) / procstat.ClockTicks
		v["cpu_us_per_delivery"] = cpu / float64(got) * 1e6
	}
	res := room.result(time.Since(start), want-got)
	for k, x := range runner.LoadValues(res) {
		v[k] = x
	}
	v["sent"], v["expected"] = float64(sent), float64(want)
	if want > 0 {
		v["delivered_pct"] = 100 * float64(got) / float64(want)
	}
	return runner.Outcome{Values: v, Latency: res.Latency}, ctx.Err()
}

// c10kBroadcast makes the clients take turns broadcasting, s.rate a second,
// for s.active; it returns how many broadcasts were sent.
func c10kBroadcast(ctx context.Context, room *chatRoom, s c10kSettings) int64 {
	ctx, cancel := context.WithTimeout(ctx, s.active)
	defer cancel()
	tick := time.NewTicker(time.Duration(float64(time.Second) / s.rate))
	defer tick.Stop()
	var sent int64
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return sent
		case <-tick.C:
		}
		if room.broadcast(room.clients[i%len(room.clients)], s.size, 10*time.Second) == nil {
			sent++
		}
	}
}
