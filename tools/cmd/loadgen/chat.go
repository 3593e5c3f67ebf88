package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"serverlab/tools/internal/chatload"
	"serverlab/tools/internal/load"
	"serverlab/tools/internal/procstat"
)

// The chat mode re-creates the original's load_test.py and stress_test.py
// against a chat protocol v1 server (chapters 02 and 05): N clients register,
// log in, meet at a barrier, and each broadcasts M messages; every receiver
// timestamps every delivery. It reports the per-delivery latency (send → one
// receiver), the fan-out latency (send → the last receiver), the messages
// lost and the share of clients that logged in. -steps runs it for several
// client counts and stops when the server degrades. The clients are package
// chatload's, which tools/cmd/bench's chat experiments use too.
func init() {
	register(mode{
		name:    "chat",
		summary: "chat v1 fan-out: N clients log in, each broadcasts M messages; delivery latency (-steps: stress)",
		run:     runChat,
	})
}

// chatConfig is one chat run's settings; package chatload is the client.
type chatConfig struct {
	discovery, usersFile string
	pid                  int // the server's, for its RSS; 0 = don't sample
	client               chatload.Config
	plan                 chatload.Plan // Messages per client, Size, Interval
}

func runChat(ctx context.Context, env *env, args []string) error {
	fs := newFlagSet(env, "chat")
	common := addCommonFlags(fs, "127.0.0.1:6000")
	var cfg chatConfig
	fs.StringVar(&cfg.discovery, "discovery", "127.0.0.1:5000", "discovery server `address` the clients register with")
	fs.StringVar(&cfg.usersFile, "users", "", "append the clients to this users `file` instead of registering (fast for 1000 clients)")
	fs.IntVar(&cfg.plan.Size, "size", 64, "payload bytes per message (at least 24: sender, number, send time)")
	fs.DurationVar(&cfg.plan.Interval, "interval", 50*time.Millisecond, "pause between one client's messages (0 = a burst)")
	fs.IntVar(&cfg.pid, "pid", 0, "the server's process id: report its RSS with the clients idle and at the end")
	fs.StringVar(&cfg.client.Engine, "engine", chatload.Goroutines, "how the clients receive: `goroutines` (one per client) or epoll (one goroutine for all; Linux)")
	fs.BoolVar(&cfg.client.KernelTimestamps, "kernel-timestamps", false, "with -engine epoll: time each delivery by when the kernel queued it on the socket (SO_TIMESTAMPNS), not when the load generator read it")
	steps := fs.String("steps", "", "stress: client counts to run in turn, `list` like 2,7,12 or start:max:step like 2:47:5")
	maxP95 := fs.Duration("max-p95", 5*time.Second, "stress: stop after a step whose p95 delivery latency is over this")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if common.rate > 0 {
		return usageFail(fs, errors.New("-rate is not meaningful here: each client sends every -interval"))
	}
	if err := chatload.CheckEngine(cfg.client.Engine); err != nil {
		return usageFail(fs, err)
	}
	if cfg.client.KernelTimestamps && cfg.client.Engine != chatload.Epoll {
		return usageFail(fs, errors.New("-kernel-timestamps needs -engine epoll"))
	}
	cfg.client.Addr, cfg.client.Timeout, cfg.plan.Messages = common.addr, common.timeout, common.requests
	if cfg.plan.Messages == 0 {
		cfg.plan.Messages = 20
	}
	counts := []int{common.clients}
	if *steps != "" {
		var err error
		if counts, err = parseSteps(*steps); err != nil {
			return usageFail(fs, err)
		}
	}
	userLabels := common.labels
	for _, n := range counts {
		r, err := runChatOnce(ctx, cfg, n)
		if err != nil {
			return err
		}
		common.clients = n
		if err := reportChat(env, common, userLabels, cfg, r); err != nil {
			return err
		}
		if why := r.degraded(*maxP95); why != "" && len(counts) > 1 {
			fmt.Fprintf(env.stdout, "stopping the stress test at %d clients: %s\n", n, why)
			break
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

// usageFail reports a command-line mistake the flag package cannot see.
func usageFail(fs *flag.FlagSet, err error) error {
	fmt.Fprintln(fs.Output(), err)
	fs.Usage()
	return usageError{err}
}

// parseSteps reads "2,7,12" or "2:47:5" (start:max:step).
func parseSteps(s string) ([]int, error) {
	if parts := strings.Split(s, ":"); len(parts) == 3 {
		var v [3]int
		for i, p := range parts {
			n, err := strconv.Atoi(p)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("-steps %q: %q is not a positive number", s, p)
			}
			v[i] = n
		}
		var out []int
		for n := v[0]; n <= v[1]; n += v[2] {
			out = append(out, n)
		}
		return out, nil
	}
	var out []int
	for p := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 2 {
			return nil, fmt.Errorf("-steps %q: %q is not a client count of at least 2", s, p)
		}
		out = append(out, n)
	}
	return out, nil
}

// chatResult is what one run measured.
type chatResult struct {
	chatload.Result
	rssIdle, rssEnd int64   // KiB, -1 if not sampled
	cpu             float64 // the server's CPU while the messages flowed, % of one core; -1 if not sampled
}

// degraded says why a stress test should stop after this step, as the
// original's did: most clients could not connect, or latency exploded.
func (r chatResult) degraded(maxP95 time.Duration) string {
	switch {
	case r.Connected*2 < r.Clients:
		return fmt.Sprintf("only %d of %d clients logged in", r.Connected, r.Clients)
	case r.Delivery.P95 > maxP95:
		return fmt.Sprintf("p95 delivery latency %v is over %v", r.Delivery.P95, maxP95)
	}
	return ""
}

// reportChat writes two results, the per-delivery and the fan-out latency,
// labelled with what the run achieved.
func reportChat(env *env, common *commonFlags, userLabels labelList, cfg chatConfig, r chatResult) error {
	extra := labelList{
		{Name: "messages", Value: strconv.Itoa(cfg.plan.Messages)},
		{Name: "interval_ms", Value: strconv.FormatFloat(cfg.plan.Interval.Seconds()*1000, 'g', -1, 64)},
		{Name: "connected", Value: strconv.Itoa(r.Connected)},
		{Name: "lost", Value: strconv.FormatInt(r.Lost, 10)},
	}
	if cfg.pid != 0 {
		extra = append(extra,
			load.Label{Name: "rss_idle_kib", Value: strconv.FormatInt(r.rssIdle, 10)},
			load.Label{Name: "rss_end_kib", Value: strconv.FormatInt(r.rssEnd, 10)},
			load.Label{Name: "cpu_pct", Value: strconv.FormatFloat(r.cpu, 'f', 1, 64)})
	}
	for _, m := range []struct {
		name string
		res  load.Result
	}{{"delivery", r.Delivery}, {"fanout", r.Fanout}} {
		common.labels = append(append(append(labelList{}, userLabels...), load.Label{Name: "measure", Value: m.name}), extra...)
		if err := common.report(env, "chat", m.res); err != nil {
			return err
		}
	}
	fmt.Fprintf(env.stdout, "  clients     %d of %d logged in; %d of %d deliveries lost\n", r.Connected, r.Clients, r.Lost, r.Expected)
	if cfg.pid != 0 {
		fmt.Fprintf(env.stdout, "  server      RSS %d KiB with the clients logged in and idle, %d KiB at the end; CPU %.1f%% while the messages flowed\n",
			r.rssIdle, r.rssEnd, r.cpu)
	}
	return nil
}

func runChatOnce(ctx context.Context, cfg chatConfig, n int) (chatResult, error) {
	r := chatResult{Result: chatload.Result{Clients: n}, rssIdle: -1, rssEnd: -1, cpu: -1}
	names := chatload.Names(fmt.Sprintf("lg%08x-", rand.Uint32()), n) // unique across runs, so runs can share a users file
	if err := registerAll(ctx, cfg, names); err != nil {
		return r, err
	}
	room := chatload.Join(ctx, cfg.client, names)
	defer room.Close()
	idle, sampled := sample(cfg.pid)
	r.rssIdle = idle.RSSKiB
	res, err := room.Run(ctx, cfg.plan)
	r.Result = res
	if err != nil {
		return r, err
	}
	if end, ok := sample(cfg.pid); ok && sampled {
		r.rssEnd, r.cpu = end.RSSKiB, procstat.CPUPercent(idle, end)
	}
	return r, nil
}

// registerAll makes the users known: appended to -users, or registered one by
// one with the discovery server (iterative, as in chapter 01).
func registerAll(ctx context.Context, cfg chatConfig, names []string) error {
	if cfg.usersFile != "" {
		return chatload.AppendUsers(cfg.usersFile, names)
	}
	return chatload.Register(ctx, cfg.discovery, names, cfg.client.Timeout)
}

// sample reads the server's counters, if there is a server to watch.
func sample(pid int) (procstat.Snapshot, bool) {
	if pid == 0 {
		return procstat.Snapshot{RSSKiB: -1}, false
	}
	s, err := procstat.Read(pid)
	if err != nil {
		return procstat.Snapshot{RSSKiB: -1}, false
	}
	return s, true
}
