package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"serverlab/tools/loadgen/load"
	"serverlab/tools/monitor/procstat"
	"serverlab/tools/users"
	"serverlab/tools/wire"
)

// The chat mode re-creates the original's load_test.py and stress_test.py
// against a chat protocol v1 server (chapters 02 and 05): N clients register,
// log in, meet at a barrier, and each broadcasts M messages; every receiver
// timestamps every delivery. It reports the per-delivery latency (send → one
// receiver), the fan-out latency (send → the last receiver), the messages
// lost and the share of clients that logged in. -steps runs it for several
// client counts and stops when the server degrades.
func init() {
	register(mode{
		name:    "chat",
		summary: "chat v1 fan-out: N clients log in, each broadcasts M messages; delivery latency (-steps: stress)",
		run:     runChat,
	})
}

// chatConfig is one chat run's settings.
type chatConfig struct {
	addr, discovery, usersFile string
	messages                   int           // per client
	size                       int           // payload bytes
	interval                   time.Duration // between one client's messages
	timeout                    time.Duration
	pid                        int    // the server's, for its RSS; 0 = don't sample
	engine                     string // engineGoroutines or engineEpoll
	kernelTimestamps           bool   // epoll: time deliveries by the kernel's receive timestamp
}

// The receive engines. Both measure the same thing; they differ in what the
// measuring costs. With a goroutine per client, each broadcast wakes N−1
// goroutines in the load generator, which on a small machine competes with
// the server and adds its own scheduling delay to every delivery. The epoll
// engine reads every connection from one goroutine and timestamps each
// delivery as soon as its read returns.
const (
	engineGoroutines = "goroutines"
	engineEpoll      = "epoll"
)

func checkEngine(name string) error {
	switch {
	case name == engineGoroutines:
		return nil
	case name == engineEpoll && epollSupported:
		return nil
	case name == engineEpoll:
		return errors.New("-engine epoll works on Linux only; use -engine goroutines")
	}
	return fmt.Errorf("-engine %q: want %s or %s", name, engineGoroutines, engineEpoll)
}

func runChat(ctx context.Context, env *env, args []string) error {
	fs := newFlagSet(env, "chat")
	common := addCommonFlags(fs, "127.0.0.1:6000")
	var cfg chatConfig
	fs.StringVar(&cfg.discovery, "discovery", "127.0.0.1:5000", "discovery server `address` the clients register with")
	fs.StringVar(&cfg.usersFile, "users", "", "append the clients to this users `file` instead of registering (fast for 1000 clients)")
	fs.IntVar(&cfg.size, "size", 64, "payload bytes per message (at least 24: sender, number, send time)")
	fs.DurationVar(&cfg.interval, "interval", 50*time.Millisecond, "pause between one client's messages (0 = a burst)")
	fs.IntVar(&cfg.pid, "pid", 0, "the server's process id: report its RSS with the clients idle and at the end")
	fs.StringVar(&cfg.engine, "engine", engineGoroutines, "how the clients receive: `goroutines` (one per client) or epoll (one goroutine for all; Linux)")
	fs.BoolVar(&cfg.kernelTimestamps, "kernel-timestamps", false, "with -engine epoll: time each delivery by when the kernel queued it on the socket (SO_TIMESTAMPNS), not when the load generator read it")
	steps := fs.String("steps", "", "stress: client counts to run in turn, `list` like 2,7,12 or start:max:step like 2:47:5")
	maxP95 := fs.Duration("max-p95", 5*time.Second, "stress: stop after a step whose p95 delivery latency is over this")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if common.rate > 0 {
		return usageFail(fs, errors.New("-rate is not meaningful here: each client sends every -interval"))
	}
	if err := checkEngine(cfg.engine); err != nil {
		return usageFail(fs, err)
	}
	if cfg.kernelTimestamps && cfg.engine != engineEpoll {
		return usageFail(fs, errors.New("-kernel-timestamps needs -engine epoll"))
	}
	cfg.addr, cfg.timeout, cfg.messages = common.addr, common.timeout, common.requests
	if cfg.messages == 0 {
		cfg.messages = 20
	}
	cfg.size = max(cfg.size, payloadHeader)
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
	clients, connected int
	delivery, fanout   load.Result
	expected, lost     int64
	rssIdle, rssEnd    int64   // KiB, -1 if not sampled
	cpu                float64 // the server's CPU while the messages flowed, % of one core; -1 if not sampled
}

// degraded says why a stress test should stop after this step, as the
// original's did: most clients could not connect, or latency exploded.
func (r chatResult) degraded(maxP95 time.Duration) string {
	switch {
	case r.connected*2 < r.clients:
		return fmt.Sprintf("only %d of %d clients logged in", r.connected, r.clients)
	case r.delivery.P95 > maxP95:
		return fmt.Sprintf("p95 delivery latency %v is over %v", r.delivery.P95, maxP95)
	}
	return ""
}

// reportChat writes two results, the per-delivery and the fan-out latency,
// labelled with what the run achieved.
func reportChat(env *env, common *commonFlags, userLabels labelList, cfg chatConfig, r chatResult) error {
	extra := labelList{
		{Name: "messages", Value: strconv.Itoa(cfg.messages)},
		{Name: "interval_ms", Value: strconv.FormatFloat(cfg.interval.Seconds()*1000, 'g', -1, 64)},
		{Name: "connected", Value: strconv.Itoa(r.connected)},
		{Name: "lost", Value: strconv.FormatInt(r.lost, 10)},
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
	}{{"delivery", r.delivery}, {"fanout", r.fanout}} {
		common.labels = append(append(append(labelList{}, userLabels...), load.Label{Name: "measure", Value: m.name}), extra...)
		if err := common.report(env, "chat", m.res); err != nil {
			return err
		}
	}
	fmt.Fprintf(env.stdout, "  clients     %d of %d logged in; %d of %d deliveries lost\n", r.connected, r.clients, r.lost, r.expected)
	if cfg.pid != 0 {
		fmt.Fprintf(env.stdout, "  server      RSS %d KiB with the clients logged in and idle, %d KiB at the end; CPU %.1f%% while the messages flowed\n",
			r.rssIdle, r.rssEnd, r.cpu)
	}
	return nil
}

// payloadHeader is the start of every message: the sender's index, the
// message's number and its send time (nanoseconds since the run's start), so
// a receiver can time it and the run can match deliveries to messages.
const payloadHeader = 24

// chatRun is the state of one run shared by its clients.
type chatRun struct {
	cfg      chatConfig
	start    time.Time        // the barrier: t = 0 of the send times
	delivery []*load.Recorder // one per receiver stripe
	// fanout[sender*messages+seq]: deliveries of that message so far, and the
	// latest one's latency, for the fan-out latency.
	count   []atomic.Int32
	slowest []atomic.Int64
	// lastDelivery is the latest delivery's time since start: the run's wall time.
	lastDelivery atomic.Int64
}

// receiveFunc is a receive engine: until ctx is done, it reads the broadcasts reaching conns,
// each of which should get want of them, records them in run, and returns how
// many arrived. Once sendersDone is closed it waits at most cfg.timeout more
// for messages still missing, which are then lost.
type receiveFunc func(ctx context.Context, run *chatRun, conns []*chatConn, want int64, sendersDone <-chan struct{}) (int64, error)

func receiveEngine(name string) receiveFunc {
	if name == engineEpoll {
		return receiveEpoll
	}
	return receiveGoroutines
}

func runChatOnce(ctx context.Context, cfg chatConfig, n int) (chatResult, error) {
	r := chatResult{clients: n, rssIdle: -1, rssEnd: -1, cpu: -1}
	names := clientNames(n)
	if err := registerAll(ctx, cfg, names); err != nil {
		return r, err
	}
	conns := loginAll(ctx, cfg, names)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	var senders []int // indexes of the clients that logged in
	for i, c := range conns {
		if c != nil {
			senders = append(senders, i)
		}
	}
	r.connected = len(senders)
	idle, sampled := sample(cfg.pid)
	r.rssIdle = idle.RSSKiB

	run := &chatRun{cfg: cfg, count: make([]atomic.Int32, n*cfg.messages), slowest: make([]atomic.Int64, n*cfg.messages)}
	for range min(len(senders), 64) {
		run.delivery = append(run.delivery, load.NewRecorder())
	}
	perReceiver := int64(cfg.messages * (len(senders) - 1))
	r.expected = perReceiver * int64(len(senders))
	receivers := make([]*chatConn, 0, len(senders))
	for _, i := range senders {
		receivers = append(receivers, conns[i])
	}

	var sending sync.WaitGroup
	sendersDone := make(chan struct{})
	run.start = time.Now()
	for k, i := range senders {
		rec := run.delivery[k%len(run.delivery)]
		sending.Go(func() { run.send(ctx, conns[i], i, rec) })
	}
	go func() {
		sending.Wait()
		close(sendersDone)
	}()
	received, err := receiveEngine(cfg.engine)(ctx, run, receivers, perReceiver, sendersDone)
	<-sendersDone
	if err != nil {
		return r, err
	}
	if end, ok := sample(cfg.pid); ok && sampled {
		r.rssEnd, r.cpu = end.RSSKiB, procstat.CPUPercent(idle, end)
	}

	r.lost = r.expected - received
	all := load.NewRecorder()
	for _, rec := range run.delivery {
		all.Merge(rec)
	}
	for range r.lost {
		all.Fail(load.WithKind("lost", errors.New("a broadcast never reached a logged-in client")))
	}
	wall := time.Duration(run.lastDelivery.Load())
	r.delivery = all.Result(wall)
	r.fanout = run.fanoutResult(len(senders)-1, wall)
	return r, ctx.Err()
}

// clientNames are unique across runs, so runs can share a users file.
func clientNames(n int) []string {
	tag := rand.Uint32()
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("lg%08x-%d", tag, i)
	}
	return names
}

const chatPassword = "loadgen"

// registerAll makes the users known: appended to -users, or registered one by
// one with the discovery server (iterative, as in chapter 01).
func registerAll(ctx context.Context, cfg chatConfig, names []string) error {
	if cfg.usersFile != "" {
		var b strings.Builder
		for _, name := range names {
			b.WriteString(users.User{Name: name, Password: chatPassword, IP: "127.0.0.1", Port: 0}.Line())
		}
		f, err := os.OpenFile(cfg.usersFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return err
		}
		_, err = f.WriteString(b.String())
		return errors.Join(err, f.Close())
	}
	for _, name := range names {
		if err := registerUser(ctx, cfg, name); err != nil {
			return fmt.Errorf("registering %s with %s: %w", name, cfg.discovery, err)
		}
	}
	return nil
}

func registerUser(ctx context.Context, cfg chatConfig, name string) error {
	conn, err := load.Dial(ctx, "tcp", cfg.discovery, cfg.timeout)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(cfg.timeout))
	reply, err := request(conn, wire.Frame{Type: wire.Registration, Sender: name, Payload: []byte(chatPassword)})
	if err == nil && string(reply.Payload) != "OK" {
		err = fmt.Errorf("%w: %v", load.ErrBadReply, reply)
	}
	return err
}

func request(conn net.Conn, f wire.Frame) (wire.Frame, error) {
	if err := wire.WriteFrame(conn, f); err != nil {
		return wire.Frame{}, err
	}
	return wire.ReadFrame(conn)
}

// chatConn is a logged-in client.
type chatConn struct {
	net.Conn // a *net.TCPConn, whose descriptor the epoll engine reads
	r        *bufio.Reader
	untie    func() bool
}

// dialChat connects as load.Dial does, closing the connection once ctx is
// done, but keeps the *net.TCPConn itself so that its descriptor can be had.
func dialChat(ctx context.Context, cfg chatConfig) (*chatConn, error) {
	d := net.Dialer{Timeout: cfg.timeout}
	conn, err := d.DialContext(ctx, "tcp", cfg.addr)
	if err != nil {
		return nil, err
	}
	return &chatConn{Conn: conn, untie: context.AfterFunc(ctx, func() { conn.Close() })}, nil
}

func (c *chatConn) Close() error {
	c.untie()
	return c.Conn.Close()
}

// loginAll logs every client in at once; a client that fails is nil.
func loginAll(ctx context.Context, cfg chatConfig, names []string) []*chatConn {
	conns := make([]*chatConn, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() {
			conn, err := dialChat(ctx, cfg)
			if err != nil {
				return
			}
			conn.SetDeadline(time.Now().Add(cfg.timeout))
			reply, err := request(conn, wire.Frame{Type: wire.Login, Sender: name, Payload: []byte(chatPassword)})
			if err != nil || string(reply.Payload) != "OK" {
				conn.Close()
				return
			}
			conn.SetDeadline(time.Time{})
			conn.r = bufio.NewReaderSize(conn.Conn, 64<<10)
			conns[i] = conn
		})
	}
	wg.Wait()
	return conns
}

// send broadcasts the client's messages, one every interval, starting at a
// random point of the first interval so that the clients do not send in
// lockstep.
func (run *chatRun) send(ctx context.Context, c *chatConn, sender int, rec *load.Recorder) {
	cfg := run.cfg
	next := time.Duration(0)
	if cfg.interval > 0 {
		next = rand.N(cfg.interval)
	}
	payload := make([]byte, cfg.size)
	for seq := range cfg.messages {
		if wait := time.Until(run.start.Add(next)); wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return
			}
		}
		next += cfg.interval
		binary.LittleEndian.PutUint64(payload[0:], uint64(sender))
		binary.LittleEndian.PutUint64(payload[8:], uint64(seq))
		binary.LittleEndian.PutUint64(payload[16:], uint64(time.Since(run.start)))
		b, err := wire.Encode(wire.Frame{Type: wire.Broadcast, Sender: "x", Target: wire.Everyone, Payload: payload})
		if err == nil {
			c.SetWriteDeadline(time.Now().Add(cfg.timeout))
			_, err = c.Write(b)
		}
		if err != nil {
			rec.Fail(err)
			return
		}
	}
}

// receiveGoroutines is the goroutine-per-client engine: each client blocks
// in its own read, as a chat client would.
func receiveGoroutines(_ context.Context, run *chatRun, conns []*chatConn, want int64, sendersDone <-chan struct{}) (int64, error) {
	var received atomic.Int64
	var receiving sync.WaitGroup
	for k, c := range conns {
		rec := run.delivery[k%len(run.delivery)]
		receiving.Go(func() { received.Add(run.receive(c, want, rec)) })
	}
	<-sendersDone
	for _, c := range conns { // a receiver still waiting for a lost message stops at this deadline
		c.SetReadDeadline(time.Now().Add(run.cfg.timeout))
	}
	receiving.Wait()
	return received.Load(), nil
}

// receive reads broadcasts until it has want of them or its read deadline
// passes, recording each one's latency. It returns how many it got.
func (run *chatRun) receive(c *chatConn, want int64, rec *load.Recorder) int64 {
	var got int64
	for got < want {
		f, err := wire.ReadFrame(c.r)
		if err != nil {
			return got
		}
		if run.deliver(f, time.Since(run.start), rec) {
			got++
		}
	}
	return got
}

// deliver records broadcast f, which arrived at now (since the run's start),
// and reports whether it was one of this run's messages.
func (run *chatRun) deliver(f wire.Frame, now time.Duration, rec *load.Recorder) bool {
	if f.Type != wire.Broadcast || len(f.Payload) < payloadHeader {
		return false
	}
	sender := int(binary.LittleEndian.Uint64(f.Payload[0:]))
	seq := int(binary.LittleEndian.Uint64(f.Payload[8:]))
	sent := time.Duration(binary.LittleEndian.Uint64(f.Payload[16:]))
	id := sender*run.cfg.messages + seq
	if sender < 0 || seq < 0 || seq >= run.cfg.messages || id >= len(run.count) {
		return false // not one of this run's messages
	}
	latency := now - sent
	rec.Succeed(latency)
	run.count[id].Add(1)
	atomicMax(&run.slowest[id], int64(latency))
	atomicMax(&run.lastDelivery, int64(now))
	return true
}

func atomicMax(v *atomic.Int64, x int64) {
	for {
		old := v.Load()
		if x <= old || v.CompareAndSwap(old, x) {
			return
		}
	}
}

// fanoutResult is the latency from a message's send to its last delivery,
// over the messages that reached every other client.
func (run *chatRun) fanoutResult(receivers int, wall time.Duration) load.Result {
	rec := load.NewRecorder()
	for id := range run.count {
		if receivers > 0 && int(run.count[id].Load()) == receivers {
			rec.Succeed(time.Duration(run.slowest[id].Load()))
		}
	}
	return rec.Result(wall)
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
