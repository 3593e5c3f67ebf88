package main

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"serverlab/tools/bench/runner"
)

// The chat experiment is the original chat system's monitoring suite
// (run_all: a load test, a stress test, CPU%, VmRSS and PSS sampled, five
// comparison plots) on the course's runner: chapter 02's goroutine-per-client
// server against chapter 05's epoll loop and, with -peers, the original
// threaded and select() servers, alternately in the same run.
//
//	make bench-chat        (go run ./tools/bench chat -out docs/bench-chat)
func init() {
	register(experiment{
		name:    "chat",
		summary: "chat servers ch02 vs ch05 (+ the original threaded and select with -peers): load and stress test, 5 plots",
		run:     runChat,
	})
}

// chatSettings is one chat test: every client broadcasts messages, one
// every interval, and every other client times each delivery.
type chatSettings struct {
	messages int
	interval time.Duration
	size     int
	timeout  time.Duration // for a login, a write, and for deliveries still missing at the end
}

func runChat(ctx context.Context, args []string) error {
	f := newFlags("chat", "docs/bench-chat", 3)
	loadClients := f.Int("load-clients", 10, "load test: concurrent clients")
	loadMessages := f.Int("load-messages", 20, "load test: messages per client")
	stressFrom := f.Int("stress-from", 2, "stress test: the first step's clients")
	stressTo := f.Int("stress-to", 47, "stress test: at most this many clients")
	stressStep := f.Int("stress-step", 5, "stress test: clients added per step")
	stressMessages := f.Int("stress-messages", 10, "stress test: messages per client and step")
	interval := f.Duration("interval", 50*time.Millisecond, "pause between one client's messages (the original's tests: 50ms)")
	if err := f.parse(args); err != nil {
		return err
	}
	servers, cleanup, err := build(ctx, chatServers(f))
	if err != nil {
		return err
	}
	defer cleanup()
	base := chatSettings{interval: *interval, size: 64, timeout: 3 * time.Second}

	loadTest := chatExperiment("chat-load", f, servers, []int{*loadClients}, withMessages(base, *loadMessages))
	loadTest.Table = []runner.Column{
		{Key: "connected_pct", Title: "logged in %"},
		{Key: "delivered_pct", Title: "delivered %"},
		{Key: "mean_ms", Title: "mean ms", Ratio: true},
		{Key: "p50_ms", Title: "p50 ms"},
		{Key: "p95_ms", Title: "p95 ms", Ratio: true},
		{Key: "p99_ms", Title: "p99 ms", Ratio: true},
		{Key: "cpu_pct", Title: "CPU %", Ratio: true},
		{Key: "rss_kib", Title: "RSS KiB"},
		{Key: "pss_kib", Title: "PSS KiB"},
	}
	var steps []int
	for n := *stressFrom; n <= *stressTo; n += max(1, *stressStep) {
		steps = append(steps, n)
	}
	stress := chatExperiment("chat-stress", f, servers, steps, withMessages(base, *stressMessages))
	stress.Table = loadTest.Table
	stress.Plots = []runner.Plot{
		{File: "cpu_vs_clients.png", Title: "Server CPU during the stress test", Y: "CPU (% of one core)", Keys: []string{"cpu_pct"}},
		{File: "memory_vs_clients.png", Title: "Server memory during the stress test (peak)", Y: "MiB",
			Keys: []string{"rss_kib", "pss_kib"}, Names: []string{"RSS", "PSS"}, Scale: 1.0 / 1024},
		{File: "avg_latency_vs_clients.png", Title: "Delivery time per step (send → each receiver)", Y: "ms",
			Keys: []string{"mean_ms", "p95_ms"}, Names: []string{"average", "P95"}},
		{File: "connection_success.png", Title: "Clients that logged in", Y: "% of the step's clients", Keys: []string{"connected_pct"}},
	}

	var all []*runner.Results
	for _, e := range []runner.Experiment{loadTest, stress} {
		res, err := e.Run(ctx)
		if err != nil {
			return err
		}
		all = append(all, res)
	}
	if err := runner.WriteFiles(f.out, all...); err != nil {
		return err
	}
	return deliveryPlot(f.out, all[0])
}

func withMessages(s chatSettings, n int) chatSettings {
	s.messages = n
	return s
}

// chatServers are the servers to compare: ours, built from source, and the
// originals if -peers has them. The originals listen on the fixed port 6000
// and read users.txt in their working folder.
func chatServers(f *flags) []runner.Server {
	ours := []string{"-addr", "{addr}", "-users", "{dir}/users.txt"}
	servers := []runner.Server{
		{Name: "ch02", Pkg: "./solutions/02/cmd/chatserver", Args: ours},
		{Name: "ch05", Pkg: "./solutions/05/cmd/chatserver", Args: ours},
	}
	for _, o := range []struct{ name, bin string }{{"threaded", "chat/chat_server"}, {"select", "chat/chat_server_select"}} {
		if bin := f.peer(o.bin); bin != "" {
			servers = append(servers, runner.Server{Name: o.name, Bin: bin, Addr: "127.0.0.1:6000"})
		}
	}
	return servers
}

// chatExperiment is one chat test over the given client counts.
func chatExperiment(name string, f *flags, servers []runner.Server, clients []int, s chatSettings) runner.Experiment {
	return runner.Experiment{
		Name:    name,
		Command: f.command(),
		Servers: servers,
		Clients: clients,
		Rounds:  f.rounds,
		Setup: func(t *runner.Trial) error {
			return writeChatUsers(filepath.Join(t.Dir, "users.txt"), t.Clients)
		},
		Trial: func(ctx context.Context, t *runner.Trial) (runner.Outcome, error) {
			return chatTrial(ctx, t, s)
		},
	}
}

// chatTrial logs the clients in, makes each broadcast its messages (from a
// random point of the first interval, so that they do not send in lockstep)
// and waits for the deliveries.
func chatTrial(ctx context.Context, t *runner.Trial, s chatSettings) (runner.Outcome, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	room, err := joinChat(ctx, t.Addr, t.Clients, s.timeout)
	if err != nil {
		return runner.Outcome{}, err
	}
	defer room.close()
	start := time.Now()
	var senders sync.WaitGroup
	var sent atomic.Int64
	for _, c := range room.clients {
		senders.Go(func() {
			next := time.Now().Add(rand.N(s.interval + 1))
			for range s.messages {
				select {
				case <-time.After(time.Until(next)):
				case <-ctx.Done():
					return
				}
				next = next.Add(s.interval)
				if room.broadcast(c, s.size, s.timeout) != nil {
					return
				}
				sent.Add(1)
			}
		})
	}
	senders.Wait()
	total := sent.Load()
	want := total * int64(len(room.clients)-1)
	got := room.await(ctx, want, s.timeout)
	wall := time.Since(start)

	res := room.result(wall, want-got)
	v := runner.LoadValues(res)
	v["connected"] = float64(len(room.clients))
	v["connected_pct"] = 100 * float64(len(room.clients)) / float64(t.Clients)
	v["sent"] = float64(total)
	v["expected"] = float64(want)
	v["lost"] = float64(want - got)
	if want > 0 {
		v["delivered_pct"] = 100 * float64(got) / float64(want)
	}
	return runner.Outcome{Values: v, Latency: res.Latency}, ctx.Err()
}

// deliveryPlot draws the load test's delivery times, every server's rounds
// together: message_delivery_time.png, a histogram and a box plot.
func deliveryPlot(dir string, load *runner.Results) error {
	cell := load.Cells()[0]
	var dists []runner.Dist
	for _, s := range load.Servers {
		dists = append(dists, runner.Dist{Name: s, Hist: load.Latency(s, cell)})
	}
	return runner.DistributionPlot(filepath.Join(dir, "message_delivery_time.png"),
		"Message delivery time, load test", dists)
}
