package main

import (
	"context"
	"fmt"
	"maps"
	"math"
	"strconv"
	"strings"
	"time"

	"serverlab/tools/internal/chatload"
	"serverlab/tools/internal/procstat"
	"serverlab/tools/internal/runner"
)

// The c10k experiment is chapter 05's: the original chat write-up's
// performance analysis (CPU%, VmRSS, PSS and delivery latency vs clients)
// extended to C10K, chapter 02's goroutine-per-client server against
// chapter 05's epoll loop.
//
//	make bench-ch05        (go run ./tools/cmd/bench c10k -out docs/bench-ch05)
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
	engine       string // chatload.Goroutines or chatload.Epoll
}

func runC10K(ctx context.Context, args []string) error {
	f := newFlags("c10k", "docs/bench-ch05", 1)
	serverList := f.String("servers", ourChatServers(),
		"servers to compare, `label=package,…` (e.g. your ./chapters/05/cmd/chatserver)")
	clientList := f.String("clients", "2,10,100,1000,5000,10000", "client `counts`, comma-separated")
	var s c10kSettings
	f.Float64Var(&s.rate, "rate", 5, "broadcasts per second in all during the active phase (the clients take turns)")
	f.IntVar(&s.size, "size", 64, "payload bytes per broadcast")
	f.DurationVar(&s.idle, "idle", 3*time.Second, "idle measurement window")
	f.DurationVar(&s.active, "active", 5*time.Second, "active phase")
	f.StringVar(&s.engine, "engine", chatload.Goroutines, "how the clients receive: `goroutines` (one per client) or epoll (one goroutine for all; Linux)")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := chatload.CheckEngine(s.engine); err != nil {
		return f.fail(err)
	}
	if s.rate <= 0 {
		return f.fail(fmt.Errorf("-rate %v: want broadcasts per second above 0", s.rate))
	}
	counts, err := parseCounts(*clientList)
	if err != nil {
		return f.fail(err)
	}
	ours := []string{"-addr", "{addr}", "-users", "{dir}/users.txt", "-login-timeout", "10m"}
	servers, err := parseServers(*serverList, ours)
	if err != nil {
		return f.fail(err)
	}
	raiseFDLimit()
	e := runner.Experiment{
		Name:    "c10k",
		Command: f.command(),
		Servers: servers,
		Clients: counts,
		Rounds:  f.rounds,
		Setup:   writeChatUsers,
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
	room, err := joinChat(ctx, t, chatload.Config{Addr: t.Addr, Timeout: 30 * time.Second, Logins: 100, Engine: s.engine})
	if err != nil {
		return runner.Outcome{}, err
	}
	defer room.Close()
	loggedIn := room.Connected()
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

	res, err := room.Run(ctx, c10kPlan(s, loggedIn))
	if err != nil {
		return runner.Outcome{}, err
	}
	after, err := procstat.Read(t.PID)
	if err != nil {
		return runner.Outcome{}, err
	}
	v["active_cpu_pct"] = procstat.CPUPercent(idleEnd, after)
	if got := res.Expected - res.Lost; got > 0 {
		cpu := float64(after.CPUTicks-idleEnd.CPUTicks) / procstat.ClockTicks
		v["cpu_us_per_delivery"] = cpu / float64(got) * 1e6
	}
	maps.Copy(v, chatValues(t, res))
	return runner.Outcome{Values: v, Latency: res.Delivery.Latency}, nil
}

// c10kPlan is the active phase for n logged-in clients: s.rate broadcasts
// a second in all for s.active, the clients taking turns. With more clients
// than broadcasts each of the first ones sends one; with fewer, each sends
// its share, rounded down.
func c10kPlan(s c10kSettings, n int) chatload.Plan {
	total := max(1, int(math.Round(s.rate*s.active.Seconds())))
	senders := min(n, total)
	return chatload.Plan{
		Messages: max(1, total/senders),
		Size:     s.size,
		Interval: time.Duration(float64(senders) / s.rate * float64(time.Second)),
		Senders:  senders,
		Turns:    true,
	}
}
