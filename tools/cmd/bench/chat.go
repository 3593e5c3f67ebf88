package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"serverlab/tools/internal/chatload"
	"serverlab/tools/internal/runner"
)

// The chat experiment is the original chat system's monitoring suite
// (run_all: a load test, a stress test, CPU%, VmRSS and PSS sampled, five
// comparison plots) on the course's runner: chapter 02's goroutine-per-client
// server against chapter 05's epoll loop and, with -peers, the original
// threaded and select() servers, alternately in the same run.
//
//	make bench-chat        (go run ./tools/cmd/bench chat -out docs/bench-chat)
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
	engine   string        // chatload.Goroutines or chatload.Epoll
}

func runChat(ctx context.Context, args []string) error {
	f := newFlags("chat", "docs/bench-chat", 5)
	serverList := f.String("servers", ourChatServers(),
		"the course's servers to compare, `label=package,…` (e.g. yours: ch02=./chapters/02/cmd/chatserver)")
	loadClients := f.Int("load-clients", 10, "load test: concurrent clients")
	loadMessages := f.Int("load-messages", 20, "load test: messages per client")
	stressFrom := f.Int("stress-from", 2, "stress test: the first step's clients")
	stressTo := f.Int("stress-to", 47, "stress test: at most this many clients")
	stressStep := f.Int("stress-step", 5, "stress test: clients added per step")
	stressMessages := f.Int("stress-messages", 10, "stress test: messages per client and step")
	interval := f.Duration("interval", 50*time.Millisecond, "pause between one client's messages (the original's tests: 50ms)")
	engine := f.String("engine", chatload.Goroutines, "how the clients receive: `goroutines` (one per client) or epoll (one goroutine for all; Linux)")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := chatload.CheckEngine(*engine); err != nil {
		return f.fail(err)
	}
	ours, err := parseServers(*serverList, []string{"-addr", "{addr}", "-users", "{dir}/users.txt"})
	if err != nil {
		return f.fail(err)
	}
	servers, cleanup, err := build(ctx, append(ours, chatOriginals(f)...))
	if err != nil {
		return err
	}
	defer cleanup()
	base := chatSettings{interval: *interval, size: 64, timeout: 3 * time.Second, engine: *engine}

	loadTest := chatExperiment("chat-load", f, servers, []int{*loadClients}, withMessages(base, *loadMessages))
	loadTest.Table = []runner.Column{
		{Key: "connected_pct", Title: "logged in %"},
		{Key: "delivered_pct", Title: "delivered %"},
		{Key: "mean_ms", Title: "mean ms", Ratio: true},
		{Key: "p50_ms", Title: "p50 ms"},
		{Key: "p95_ms", Title: "p95 ms", Ratio: true},
		{Key: "p99_ms", Title: "p99 ms", Ratio: true},
		{Key: "cpu_pct", Title: "CPU %", Ratio: true},
		{Key: "cpu_us_per_op", Title: "CPU µs/delivery", Ratio: true},
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
			Keys: []string{"mean_ms", "p95_ms"}, Names: []string{"average", "P95"}, LogY: true},
		{File: "connection_success.png", Title: "Clients that logged in", Y: "% of the step's clients", Keys: []string{"connected_pct"}, Bars: true},
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

// ourChatServers are the default -servers: the reference solutions, or in
// the student release (which has none) the chapters, i.e. yours.
func ourChatServers() string {
	return "ch02=./" + tree() + "/02/cmd/chatserver,ch05=./" + tree() + "/05/cmd/chatserver"
}

// chatOriginals are the original threaded and select() servers, if -peers
// has them. They listen on the fixed port 6000 and read users.txt in their
// working folder.
func chatOriginals(f *flags) []runner.Server {
	var servers []runner.Server
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
		Setup:   writeChatUsers,
		Trial: func(ctx context.Context, t *runner.Trial) (runner.Outcome, error) {
			return chatTrial(ctx, t, s)
		},
	}
}

// chatTrial logs the clients in and makes each broadcast its messages,
// from a random point of the first interval so that they do not send in
// lockstep, while every other client times each delivery.
func chatTrial(ctx context.Context, t *runner.Trial, s chatSettings) (runner.Outcome, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	room, err := joinChat(ctx, t, chatload.Config{Addr: t.Addr, Timeout: s.timeout, Logins: originalsBacklog, Engine: s.engine})
	if err != nil {
		return runner.Outcome{}, err
	}
	defer room.Close()
	res, err := room.Run(ctx, chatload.Plan{Messages: s.messages, Size: s.size, Interval: s.interval})
	if err != nil {
		return runner.Outcome{}, err
	}
	return runner.Outcome{Values: chatValues(t, res), Latency: res.Delivery.Latency}, nil
}

// The chat experiments' clients are package chatload's, loadgen chat's
// too. They log in with the names chatNames gives, from the users file
// the experiment writes into the trial's folder before the server starts
// (the course's servers read it with -users, the originals from their
// working folder).
func chatNames(n int) []string { return chatload.Names("b", n) }

func writeChatUsers(t *runner.Trial) error {
	return chatload.AppendUsers(filepath.Join(t.Dir, "users.txt"), chatNames(t.Clients))
}

// originalsBacklog is how many logins the chat experiment has in flight at
// once: the originals listen with a backlog of 10, and a dropped SYN is
// retried a second later, which would be measured as a slow login.
const originalsBacklog = 8

// joinChat logs the trial's clients in; it fails only if none could.
func joinChat(ctx context.Context, t *runner.Trial, cfg chatload.Config) (*chatload.Room, error) {
	room := chatload.Join(ctx, cfg, chatNames(t.Clients))
	if room.Connected() == 0 {
		room.Close()
		return nil, fmt.Errorf("none of %d clients could log in: %w", t.Clients, room.LoginError())
	}
	return room, nil
}

// chatValues are a chat run's results as the runner's values.
func chatValues(t *runner.Trial, res chatload.Result) map[string]float64 {
	v := runner.LoadValues(res.Delivery)
	v["connected"] = float64(res.Connected)
	v["connected_pct"] = 100 * float64(res.Connected) / float64(t.Clients)
	v["sent"] = float64(res.Sent)
	v["expected"] = float64(res.Expected)
	v["lost"] = float64(res.Lost)
	if res.Expected > 0 {
		v["delivered_pct"] = 100 * float64(res.Expected-res.Lost) / float64(res.Expected)
	}
	v["fanout_p99_ms"] = float64(res.Fanout.P99) / float64(time.Millisecond)
	return v
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
