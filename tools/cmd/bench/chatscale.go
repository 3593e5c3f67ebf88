package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"serverlab/tools/given/chatcore/proto"
	"serverlab/tools/internal/chatcoreload"
	"serverlab/tools/internal/procstat"
	"serverlab/tools/internal/runner"
)

// The chatscale experiments are chapter 08's: N chatscale servers, each a
// node of one embedded N-node NATS cluster (one alone embeds a single
// node), driven by chapter 07's load (package chatcoreload) with its
// testers spread over the servers in turn, the cluster sizes alternating
// round by round, medians and plots written by the runner's WriteFiles;
// and the kill test (chatscale_kill.go).
//
//	go run ./tools/cmd/bench chatscale -nodes 1,2,3 -steps 100,300,450 -rounds 3 -out docs/bench-ch08
//	go run ./tools/cmd/bench chatscale -kill -writers 300 -members 10 -interval 1s -duration 20s
func init() {
	register(experiment{
		name:    "chatscale",
		summary: "chapter 08's: chapter 07's load on 1, 2 and 3 servers of one NATS cluster (p99, server CPU); -kill: kill -9 a server under load, acknowledged lost must be 0",
		run:     runChatscale,
	})
}

func runChatscale(ctx context.Context, args []string) error {
	f := newFlags("chatscale", "docs/bench-ch08", 3)
	pkg := f.String("server", "./"+tree()+"/08/cmd/chatscale-server", "the chatscale server's `package`")
	nodes := f.String("nodes", "1,2,3", "server counts, one cluster each (each server a node of it)")
	steps := f.String("steps", "100,300,450", "client counts, one step each, on every cluster")
	duration := f.Duration("duration", chatcoreload.DefaultDuration, "how long each step (or the kill test) sends")
	kill := f.Bool("kill", false, "run the kill test instead: three servers, -writers writers, kill -9 of one halfway")
	var kc killConfig
	f.IntVar(&kc.writers, "writers", 300, "with -kill: writers, spread over the three servers")
	f.IntVar(&kc.members, "members", 10, "with -kill: writers per channel (each channel has members on every server)")
	f.DurationVar(&kc.interval, "interval", time.Second, "with -kill: a writer's pause after each echo (each channel's history must stay under 1000 messages)")
	hashIter := f.Int("hash-iterations", 10000, "the servers' password hash cost (their default is 100000: at 450 clients on one machine the logins' hashes would dominate the start of a step)")
	strict := f.Bool("strict", false, "the original's tester on errors: the first login, join or request that fails ends the step (and the experiment)")
	serverLog := f.String("server-log", "error", "the servers' -log level (their log goes to stderr)")
	if err := f.parse(args); err != nil {
		return err
	}
	built, cleanup, err := build(ctx, []runner.Server{{Name: "chatscale", Pkg: *pkg}})
	if err != nil {
		return err
	}
	defer cleanup()
	bin := built[0].Bin
	extra := []string{"--hash-iterations", strconv.Itoa(*hashIter), "--log", *serverLog}
	if *kill {
		if kc.writers < 1 || kc.members < 1 {
			return f.fail(fmt.Errorf("-writers %d -members %d: want at least 1 of each", kc.writers, kc.members))
		}
		kc.duration = *duration
		return killTest(ctx, bin, extra, kc)
	}
	counts, err := chatcoreload.ParseSteps(*steps)
	if err != nil {
		return f.fail(err)
	}
	var ns []int
	for _, s := range strings.Split(*nodes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > 5 {
			return f.fail(fmt.Errorf("-nodes: %q is not a server count from 1 to 5", s))
		}
		ns = append(ns, n)
	}
	res := &runner.Results{Name: "chatscale", Command: f.command(), Table: chatscaleTable, Plots: chatscalePlots}
	for _, n := range ns {
		res.Servers = append(res.Servers, serversLabel(n))
	}
	res.Baseline = res.Servers[0]
	// The cluster sizes alternate, the order rotating from round to round
	// (1 2 3, 2 3 1, …), as the runner's servers do: noise falls on all.
	for round := 1; round <= f.rounds; round++ {
		for k := range ns {
			n := ns[(k+round-1)%len(ns)]
			rows, err := scaleRun(ctx, bin, extra, n, counts, *duration, round, *strict)
			if err != nil {
				return err
			}
			res.Rows = append(res.Rows, rows...)
		}
	}
	if err := runner.WriteFiles(f.out, res); err != nil {
		return err
	}
	fmt.Printf("bench chatscale: wrote %s (results.md, results.csv, p99.png, cpu_per_message.png)\n", f.out)
	return nil
}

// serversLabel names a cluster size in tables and plots.
func serversLabel(n int) string {
	if n == 1 {
		return "1 server"
	}
	return fmt.Sprintf("%d servers", n)
}

// The scale experiment's table (medians over the rounds, ratios to one
// server) and plots.
var (
	chatscaleTable = []runner.Column{
		{Key: "sent", Title: "sent"},
		{Key: "failed", Title: "failed"},
		{Key: "not_in_order", Title: "testers not exactly once in order"},
		{Key: "p50_us", Title: "p50 µs", Ratio: true},
		{Key: "p99_us", Title: "p99 µs", Ratio: true},
		{Key: "cpu_s", Title: "servers' CPU s"},
		{Key: "cpu_ms_per_msg", Title: "CPU ms per message", Ratio: true},
		{Key: "load1", Title: "load"},
	}
	chatscalePlots = []runner.Plot{
		{File: "p99.png", Title: "chatscale: echo latency p99 (chapter 07's load), median over the rounds",
			Y: "ms (log scale)", Keys: []string{"p99_us"}, Scale: 0.001, LogY: true},
		{File: "cpu_per_message.png", Title: "chatscale: the servers' CPU per message sent (user+system), median over the rounds",
			Y: "CPU ms per message", Keys: []string{"cpu_ms_per_msg"}},
	}
)

// scaleRun starts a cluster of n servers, runs every step on it, and
// returns one row per step.
func scaleRun(ctx context.Context, bin string, extra []string, n int, counts []int, d time.Duration, round int, strict bool) ([]runner.Row, error) {
	c, err := startCluster(ctx, bin, extra, n)
	if err != nil {
		return nil, err
	}
	defer c.stop()
	var rows []runner.Row
	for _, clients := range counts {
		v := loadAverage()
		before := c.cpu()
		res, err := chatcoreload.Run(ctx, chatcoreload.Config{Addr: strings.Join(c.addrs, ","), Clients: clients,
			Duration: d, Deliveries: true, Strict: strict, Logf: func(format string, args ...any) {
				fmt.Fprintf(os.Stderr, "  "+format+"\n", args...)
			}})
		if err != nil {
			return nil, fmt.Errorf("%d servers, %d clients: %w", n, clients, err)
		}
		v["not_in_order"] = float64(res.Order.Departed + res.Order.Duplicated)
		if !res.Order.OK() {
			fmt.Fprintf(os.Stderr, "%s, %d clients: deliveries not exactly once in one order: %v\n", serversLabel(n), clients, res.Order)
		}
		v["cpu_s"] = c.cpu() - before
		v["sent"], v["failed"] = float64(res.Sent), float64(res.Failed())
		v["p50_us"], v["p99_us"] = float64(res.P50.Microseconds()), float64(res.P99.Microseconds())
		if res.Sent > 0 {
			v["cpu_ms_per_msg"] = 1000 * v["cpu_s"] / float64(res.Sent)
		}
		fmt.Printf("round %d, %s, %d clients: sent %d, failed %d, p50 %.1f ms, p99 %.1f ms, CPU %.1f s (%.2f ms a message), load %.1f; deliveries: %v\n",
			round, serversLabel(n), clients, res.Sent, res.Failed(), ms(res.P50), ms(res.P99), v["cpu_s"], v["cpu_ms_per_msg"], v["load1"], res.Order)
		rows = append(rows, runner.Row{Experiment: "chatscale", Server: serversLabel(n), Clients: clients, Round: round, Values: v})
	}
	return rows, nil
}

// cluster is n chatscale server processes, each a node of one embedded
// NATS cluster.
type cluster struct {
	dir   string
	cmds  []*exec.Cmd
	addrs []string
	nats  []string // each node's NATS client address (none for one server)
}

// startCluster starts n servers on ports reserved up front and waits
// until each accepts chat connections.
func startCluster(ctx context.Context, bin string, extra []string, n int) (*cluster, error) {
	dir, err := os.MkdirTemp("", "chatscale-")
	if err != nil {
		return nil, err
	}
	c := &cluster{dir: dir}
	ports, err := freePorts(3 * n)
	if err != nil {
		return nil, err
	}
	for i := range n {
		c.addrs = append(c.addrs, fmt.Sprintf("127.0.0.1:%d", ports[i]))
	}
	for i := range n {
		args := append([]string{"--ip", "127.0.0.1", "--port", strconv.Itoa(ports[i]),
			"--db", filepath.Join(dir, fmt.Sprintf("node%d.db", i+1)), "--session-ttl", "3s"}, extra...)
		if n > 1 {
			var routes []string
			for j := range n {
				if j != i {
					routes = append(routes, fmt.Sprintf("127.0.0.1:%d", ports[n+j]))
				}
			}
			c.nats = append(c.nats, fmt.Sprintf("127.0.0.1:%d", ports[2*n+i]))
			args = append(args, "--replicas", strconv.Itoa(min(n, 3)), "--cluster-node", nodeName(i),
				"--cluster", fmt.Sprintf("127.0.0.1:%d", ports[n+i]), "--nats-listen", fmt.Sprintf("127.0.0.1:%d", ports[2*n+i]),
				"--routes", strings.Join(routes, ","))
		}
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			c.stop()
			return nil, err
		}
		c.cmds = append(c.cmds, cmd)
	}
	for _, addr := range c.addrs {
		if err := waitChat(ctx, addr, 60*time.Second); err != nil {
			c.stop()
			return nil, err
		}
	}
	if err := c.warmUp(); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// warmUp sends one message through the stream from every server and waits
// for its echo. A server answers before its cluster has settled: on a
// fresh 3-node cluster the first step's p99 was 3.4 s in two rounds of
// three without this (2.9 ms with it): a cost of starting the cluster, not
// of the load.
func (c *cluster) warmUp() error {
	var ch uint32
	for i, addr := range c.addrs {
		w, err := loggedIn(addr, fmt.Sprintf("warm-up-%d", i))
		if err != nil {
			return err
		}
		defer w.nc.Close()
		if ch == 0 {
			m, err := w.call(proto.CreateChannelRequest{Name: "warm-up", RequestID: 3})
			if err != nil {
				return err
			}
			r, ok := m.(proto.CreateChannelResponse)
			if !ok {
				return fmt.Errorf("warm-up channel: %v", m)
			}
			ch = r.Channel.ID
		}
		if _, err := w.call(proto.JoinChannelRequest{ChannelID: ch, RequestID: 4}); err != nil {
			return err
		}
		content := fmt.Sprintf("warm-up from server %d", i+1)
		for try := 1; ; try++ {
			if err := w.send(proto.WriteChat{Content: content}); err != nil {
				return err
			}
			err := w.awaitEcho(nil, ch, content, 30*time.Second)
			if err == nil {
				break
			}
			if !errors.Is(err, errRefused) || try == 10 {
				return fmt.Errorf("warm-up on server %d (%s): %w", i+1, addr, err)
			}
		}
	}
	return nil
}

// nodeName is server i's name as a node of the NATS cluster.
func nodeName(i int) string { return fmt.Sprintf("n%d", i+1) }

// cpu is the CPU seconds the servers have used so far (a killed one's
// last reading is lost: the kill test does not report CPU).
func (c *cluster) cpu() float64 {
	total := 0.0
	for _, cmd := range c.cmds {
		if s, err := procstat.Read(cmd.Process.Pid); err == nil {
			total += float64(s.CPUTicks) / procstat.ClockTicks
		}
	}
	return total
}

// stop ends every server (SIGTERM, then its Close) and removes the folder.
func (c *cluster) stop() {
	for _, cmd := range c.cmds {
		cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, cmd := range c.cmds {
		cmd.Wait()
	}
	os.RemoveAll(c.dir)
}

// freePorts returns n ports of 127.0.0.1, all chosen before any is used.
func freePorts(n int) ([]int, error) {
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	ports := make([]int, n)
	for i := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, ln)
		ports[i] = ln.Addr().(*net.TCPAddr).Port
	}
	return ports, nil
}

// waitChat waits until a chat server answers a GetChannels at addr (an
// answer, even Not authorized., means it has its stream and buckets).
func waitChat(ctx context.Context, addr string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		if w, err := dialWriter(addr); err == nil {
			_, err := w.call(proto.GetChannelsRequest{RequestID: 1})
			w.nc.Close()
			if err == nil {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("chatscale server at %s not ready within %v", addr, limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
