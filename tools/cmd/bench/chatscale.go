package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
// testers spread over the servers in turn; and the kill test, which
// kill -9s one of three servers while writers on all three are sending
// and then checks that every message whose echo came back is in the
// history, once.
//
//	go run ./tools/cmd/bench chatscale -nodes 1,2,3 -steps 100,300
//	go run ./tools/cmd/bench chatscale -kill -writers 30 -duration 20s
func init() {
	register(experiment{
		name:    "chatscale",
		summary: "chapter 08's: chapter 07's load on 1, 2 and 3 servers of one NATS cluster (p99, server CPU); -kill: kill -9 a server under load, acknowledged lost must be 0",
		run:     runChatscale,
	})
}

func runChatscale(ctx context.Context, args []string) error {
	f := newFlags("chatscale", "", 1)
	pkg := f.String("server", "./"+tree()+"/08/cmd/chatscale-server", "the chatscale server's `package`")
	nodes := f.String("nodes", "1,2,3", "server counts, one cluster each (each server a node of it)")
	steps := f.String("steps", "100,300", "client counts, one step each, on every cluster")
	duration := f.Duration("duration", chatcoreload.DefaultDuration, "how long each step (or the kill test) sends")
	kill := f.Bool("kill", false, "run the kill test instead: three servers, -writers writers, kill -9 of one halfway")
	writers := f.Int("writers", 30, "with -kill: writers, spread over the three servers")
	interval := f.Duration("interval", 50*time.Millisecond, "with -kill: a writer's pause after each echo (each channel's history must stay under 1000 messages)")
	hashIter := f.Int("hash-iterations", 10000, "the servers' password hash cost (their default is 600000: logins would dominate)")
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
		return killTest(ctx, bin, extra, *writers, *duration, *interval)
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
	fmt.Printf("command: %s\n\n", f.command())
	fmt.Println("| servers | clients | sent | failed | p50 (ms) | p99 (ms) | servers' CPU (s) | CPU per message (ms) |")
	fmt.Println("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, n := range ns {
		if err := scaleRun(ctx, bin, extra, n, counts, *duration); err != nil {
			return err
		}
	}
	return nil
}

// scaleRun starts a cluster of n servers and runs every step on it.
func scaleRun(ctx context.Context, bin string, extra []string, n int, counts []int, d time.Duration) error {
	c, err := startCluster(ctx, bin, extra, n)
	if err != nil {
		return err
	}
	defer c.stop()
	for _, clients := range counts {
		before := c.cpu()
		res, err := chatcoreload.Run(ctx, chatcoreload.Config{Addr: strings.Join(c.addrs, ","), Clients: clients, Duration: d})
		if err != nil {
			return fmt.Errorf("%d servers, %d clients: %w", n, clients, err)
		}
		cpu := c.cpu() - before
		perMsg := 0.0
		if res.Sent > 0 {
			perMsg = 1000 * cpu / float64(res.Sent)
		}
		fmt.Printf("| %d | %d | %d | %d | %.1f | %.1f | %.1f | %.2f |\n", n, clients, res.Sent, res.Failed(),
			ms(res.P50), ms(res.P99), cpu, perMsg)
	}
	return nil
}

// cluster is n chatscale server processes, each a node of one embedded
// NATS cluster.
type cluster struct {
	dir   string
	cmds  []*exec.Cmd
	addrs []string
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
			args = append(args, "--replicas", strconv.Itoa(min(n, 3)), "--cluster-node", fmt.Sprintf("n%d", i+1),
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
	return c, nil
}

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

// writer is one connection of the kill test.
type writer struct {
	nc net.Conn
	r  *bufio.Reader
}

func dialWriter(addr string) (*writer, error) {
	nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return nil, err
	}
	return &writer{nc: nc, r: bufio.NewReader(nc)}, nil
}

// call sends req and returns its answer, skipping events.
func (w *writer) call(req proto.Requester) (proto.Message, error) {
	if err := w.send(req); err != nil {
		return nil, err
	}
	for {
		m, err := w.next(10 * time.Second)
		if err != nil {
			return nil, err
		}
		if r, ok := m.(proto.Requester); ok && r.Request() == req.Request() {
			return m, nil
		}
	}
}

func (w *writer) send(m proto.Message) error {
	w.nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return proto.Write(w.nc, m)
}

func (w *writer) next(d time.Duration) (proto.Message, error) {
	w.nc.SetReadDeadline(time.Now().Add(d))
	return proto.Read(w.r)
}

// killStats are the kill test's counts.
type killStats struct {
	sent, acked, failed, reconnects atomic.Int64
	mu                              sync.Mutex
	acks                            map[string]bool // content → acknowledged (echoed)
	longest                         time.Duration   // the longest wait for one echo
	interval                        time.Duration   // a writer's pause after each echo
}

// killTest runs writers on three servers, kill -9s the third halfway, and
// checks the history of every writer's channel on a survivor.
func killTest(ctx context.Context, bin string, extra []string, writers int, d, interval time.Duration) error {
	c, err := startCluster(ctx, bin, extra, 3)
	if err != nil {
		return err
	}
	defer c.stop()
	st := &killStats{acks: map[string]bool{}, interval: interval}
	var wg sync.WaitGroup
	stopAt := time.Now().Add(d)
	channels := make([]uint32, writers)
	errs := make([]error, writers)
	for i := range writers {
		wg.Go(func() { channels[i], errs[i] = runWriter(ctx, c.addrs, i, stopAt, st) })
	}
	killed := time.Now().Add(d / 2)
	time.Sleep(time.Until(killed))
	c.cmds[2].Process.Signal(syscall.SIGKILL)
	fmt.Printf("kill -9 of server 3 (%s) at %s\n", c.addrs[2], killed.Format(time.TimeOnly))
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	lost, dup, stored, err := checkHistory(c.addrs[0], channels, st)
	if err != nil {
		return err
	}
	fmt.Printf("| writers | sent | acknowledged | not stored (told so) | reconnects | stored | acknowledged lost | duplicated | longest wait for an echo |\n")
	fmt.Printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	fmt.Printf("| %d | %d | %d | %d | %d | %d | %d | %d | %.2f s |\n", writers, st.sent.Load(), st.acked.Load(), st.failed.Load(),
		st.reconnects.Load(), stored, lost, dup, st.longest.Seconds())
	if lost > 0 || dup > 0 {
		return fmt.Errorf("kill test: %d acknowledged messages lost, %d duplicated", lost, dup)
	}
	return nil
}

// runWriter is writer i: on server i%3, then on the next one whenever its
// connection breaks. It sends one message at a time and waits for its echo
// (or an error); it returns its channel.
func runWriter(ctx context.Context, addrs []string, i int, stopAt time.Time, st *killStats) (uint32, error) {
	name := fmt.Sprintf("kill-writer-%d", i)
	var ch uint32
	n := 0
	for server := i % len(addrs); time.Now().Before(stopAt); server = (server + 1) % len(addrs) {
		w, err := dialWriter(addrs[server])
		if err != nil {
			continue // the killed one
		}
		ch, err = w.setUp(name, ch, stopAt)
		if err != nil {
			w.nc.Close()
			continue
		}
		n, err = w.writeUntil(name, ch, n, stopAt, st)
		w.nc.Close()
		if err == nil {
			break
		}
		st.reconnects.Add(1)
	}
	return ch, ctx.Err()
}

// setUp registers (once), logs in (retrying while the session of a killed
// server has not expired), makes the writer's channel (once) and joins it.
func (w *writer) setUp(name string, ch uint32, stopAt time.Time) (uint32, error) {
	w.call(proto.CreateUserRequest{Name: name, Password: "pw", RequestID: 1})
	for {
		m, err := w.call(proto.AuthenticateRequest{Name: name, Password: "pw", RequestID: 2})
		if err != nil {
			return 0, err
		}
		if _, ok := m.(proto.AuthenticateResponse); ok {
			break
		}
		if time.Now().After(stopAt) {
			return 0, fmt.Errorf("%s: login: %v", name, m)
		}
		time.Sleep(200 * time.Millisecond) // the dead server's session key expires
	}
	if ch == 0 {
		m, err := w.call(proto.CreateChannelRequest{Name: name, RequestID: 3})
		if err != nil {
			return 0, err
		}
		r, ok := m.(proto.CreateChannelResponse)
		if !ok {
			return 0, fmt.Errorf("%s: create channel: %v", name, m)
		}
		ch = r.Channel.ID
	}
	if _, err := w.call(proto.JoinChannelRequest{ChannelID: ch, RequestID: 4}); err != nil {
		return 0, err
	}
	return ch, nil
}

// writeUntil sends messages n, n+1, … until stopAt, each after the echo of
// the one before; it returns the next number and the error that broke the
// connection (nil at stopAt).
func (w *writer) writeUntil(name string, ch uint32, n int, stopAt time.Time, st *killStats) (int, error) {
	for ; time.Now().Before(stopAt); n++ {
		content := fmt.Sprintf("%s #%d", name, n)
		start := time.Now()
		if err := w.send(proto.WriteChat{Content: content}); err != nil {
			return n, err
		}
		st.sent.Add(1)
		for {
			m, err := w.next(15 * time.Second)
			if err != nil {
				return n + 1, err
			}
			if rc, ok := m.(proto.ReceiveChat); ok && rc.Content == content {
				st.acked.Add(1)
				st.mu.Lock()
				st.acks[content] = true
				st.longest = max(st.longest, time.Since(start))
				st.mu.Unlock()
				time.Sleep(st.interval) // pacing: the load, not a wait for anything
				break
			}
			if _, ok := m.(proto.Error); ok {
				st.failed.Add(1)
				break
			}
		}
	}
	return n, nil
}

// checkHistory reads every writer's channel on a surviving server and
// counts the acknowledged messages missing from it, and the duplicates.
func checkHistory(addr string, channels []uint32, st *killStats) (lost, dup, stored int, err error) {
	w, err := dialWriter(addr)
	if err != nil {
		return 0, 0, 0, err
	}
	defer w.nc.Close()
	w.call(proto.CreateUserRequest{Name: "kill-checker", Password: "pw", RequestID: 1})
	if _, err := w.call(proto.AuthenticateRequest{Name: "kill-checker", Password: "pw", RequestID: 2}); err != nil {
		return 0, 0, 0, err
	}
	seen := map[string]int{}
	for i, ch := range channels {
		var r proto.GetChatsResponse
		for try := 1; ; try++ {
			m, err := w.call(proto.GetChatsRequest{ChannelID: ch, Limit: 1000, RequestID: uint64(100*i + try)})
			if err != nil {
				return 0, 0, 0, err
			}
			var ok bool
			if r, ok = m.(proto.GetChatsResponse); ok {
				break
			}
			if try == 20 { // the cluster may still be electing leaders
				return 0, 0, 0, fmt.Errorf("history of channel %d: %v", ch, m)
			}
			time.Sleep(500 * time.Millisecond)
		}
		for _, msg := range r.Messages {
			seen[msg.Content]++
		}
	}
	for _, k := range seen {
		stored++
		dup += k - 1
	}
	contents := make([]string, 0, len(st.acks))
	for content := range st.acks {
		contents = append(contents, content)
	}
	slices.Sort(contents)
	for _, content := range contents {
		if seen[content] == 0 {
			lost++
			fmt.Fprintf(os.Stderr, "acknowledged, not in the history: %s\n", content)
		}
	}
	return lost, dup, stored, nil
}
