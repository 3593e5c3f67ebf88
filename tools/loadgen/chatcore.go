package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"serverlab/tools/chatcore/proto"
	"serverlab/tools/loadgen/load"
)

// The chatcore mode re-creates the load tester of the original chatcore
// (github.com/ebroschin/chatcore, apps/load-tester) step for step, so that
// its README's table can be reproduced against chapter 07's server (or the
// original):
//
//  1. "root-tester" connects, creates itself (an error means "exists"),
//     logs in and creates "test-channel" (which gives the existing one on a
//     rerun). It does not join.
//  2. N testers "tester0"…"tester{N-1}", one connection each, all at once:
//     create (errors ignored), log in, join test-channel. Every password is
//     "123".
//  3. When all are ready, tester i starts after i·(1000/N) ms (integer ms)
//     and sends one WriteChat per second (fixed delay: each send schedules
//     the next one 1 s after it runs, the first 1 s after the start), with
//     a process-wide counter as content: "0", "1", …
//  4. Latency = the arrival of the sender's own echo (103 on its own
//     connection, in the test channel, from itself) − the send.
//  5. 10 s after the last tester was ready: stop, pool the samples, Failed =
//     sent − echoed, percentiles at index floor(p·(n−1)) of the sorted
//     samples, truncated to µs.
//
// Two deviations, both harmless: the send time is taken just before the
// write (the original takes it just after queueing, which it can do because
// its echo is handled on the same thread); and a login refused with "… is
// already logged in." is retried for a few seconds, because a -steps run
// reuses the tester names of the previous step, whose sessions the server may
// still be closing.
func init() {
	register(mode{
		name:    "chatcore",
		summary: "chatcore (chapter 07): the original load tester's method — N testers, 1 msg/s each, 10 s, echo RTT table",
		run:     runChatcore,
	})
}

// chatcoreConfig is one chatcore run's settings.
type chatcoreConfig struct {
	addr     string
	clients  int
	duration time.Duration // from the last ready tester to the evaluation
	interval time.Duration // between one tester's messages
	timeout  time.Duration // per RPC, as the original (10 s)
	progress io.Writer     // nil: quiet
}

// chatcoreResult is one row of the original README's table.
type chatcoreResult struct {
	clients             int
	sent, completed     int64
	p50, p95, p99, pmax time.Duration
	hdr                 load.Result // the same samples in the course's HDR recorder
}

func runChatcore(ctx context.Context, env *env, args []string) error {
	fs := newFlagSet(env, "chatcore")
	cfg := chatcoreConfig{}
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:1338", "server `address`")
	fs.IntVar(&cfg.clients, "clients", 30, "testers (the original's default)")
	steps := fs.String("steps", "", "comma-separated client counts to run one after another, e.g. 5,25,100,200,350,450 (overrides -clients)")
	fs.DurationVar(&cfg.duration, "duration", 10*time.Second, "how long the testers send, from the last one ready (the original: 10s)")
	fs.DurationVar(&cfg.interval, "interval", time.Second, "between one tester's messages (the original: 1s)")
	fs.DurationVar(&cfg.timeout, "timeout", 10*time.Second, "limit on each request (the original: 10s)")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr")
	hdr := fs.Bool("hdr", false, "also print the HDR histogram's percentiles (p50 p95 p99 p99.9 max) of each run")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	counts := []int{cfg.clients}
	if *steps != "" {
		counts = nil
		for _, f := range strings.Split(*steps, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				return usageError{fmt.Errorf("-steps: %q is not a positive number", f)}
			}
			counts = append(counts, n)
		}
	}
	if !*quiet {
		cfg.progress = env.stderr
	}
	fmt.Fprintln(env.stdout, "| Clients | Sent | Failed | p50 (µs) | p95 (µs) | p99 (µs) | max (µs) |")
	fmt.Fprintln(env.stdout, "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, n := range counts {
		cfg.clients = n
		res, err := runChatcoreOnce(ctx, cfg)
		if err != nil {
			return fmt.Errorf("%d clients: %w", n, err)
		}
		fmt.Fprintf(env.stdout, "| %d | %d | %d | %d | %d | %d | %d |\n", res.clients, res.sent, res.sent-res.completed,
			res.p50.Microseconds(), res.p95.Microseconds(), res.p99.Microseconds(), res.pmax.Microseconds())
		if *hdr {
			h := res.hdr
			fmt.Fprintf(env.stdout, "<!-- hdr %d clients: p50 %v p95 %v p99 %v p99.9 %v max %v -->\n",
				n, h.P50, h.P95, h.P99, h.P999, h.Max)
		}
	}
	return nil
}

// ccClient is one connection of the load tester: a reader goroutine routes
// answers to the waiting RPC by request id, and echoes to onEcho.
type ccClient struct {
	name    string
	nc      net.Conn
	wmu     sync.Mutex
	nextID  atomic.Uint64
	mu      sync.Mutex
	waiting map[uint64]chan proto.Message
	user    atomic.Uint32 // set at login, read by the reader
	channel uint32        // set before the reader can see a 103
	onEcho  func(content string, at time.Time)
	done    chan struct{}
}

func dialChatcore(ctx context.Context, addr, name string, timeout time.Duration) (*ccClient, error) {
	d := net.Dialer{Timeout: timeout}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	c := &ccClient{name: name, nc: nc, waiting: make(map[uint64]chan proto.Message), done: make(chan struct{})}
	go c.readLoop()
	return c, nil
}

func (c *ccClient) readLoop() {
	defer close(c.done)
	r := bufio.NewReaderSize(c.nc, 64<<10)
	var buf []byte
	for {
		body, err := proto.ReadFrame(r, buf)
		buf = body[:0]
		if err != nil {
			return
		}
		at := time.Now()
		if c.othersEcho(body) || isEvent(body) {
			continue // most of what a tester reads: not worth decoding
		}
		m, err := proto.Decode(body)
		if err != nil {
			continue // a frame this client does not know: skip it, as the original does
		}
		if rc, ok := m.(proto.ReceiveChat); ok {
			if rc.UserID == c.user.Load() && rc.ChannelID == c.channel && c.onEcho != nil {
				c.onEcho(rc.Content, at)
			}
			continue
		}
		if rq, ok := m.(proto.Requester); ok {
			c.mu.Lock()
			ch := c.waiting[rq.Request()]
			delete(c.waiting, rq.Request())
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		}
	}
}

// othersEcho reports, without decoding, whether body is a 103 from another
// user: with N testers, N−1 of every N frames a tester reads are, and
// decoding them all would make the load generator, not the server, the
// bottleneck on a small machine. The encoder writes keys in alphabetical
// order, so a 103 ends with `"user_id":U},"type_id":103}`.
func (c *ccClient) othersEcho(body []byte) bool {
	const tail = `},"type_id":103}`
	if !bytes.HasSuffix(body, []byte(tail)) {
		return false
	}
	rest := body[:len(body)-len(tail)]
	i := bytes.LastIndex(rest, []byte(`"user_id":`))
	if i < 0 {
		return false
	}
	id, ok := parseUint32(rest[i+len(`"user_id":`):])
	return ok && id != c.user.Load()
}

// isEvent reports, without decoding, whether body is one of the events
// 125–129 (logins, logouts, joins, leaves, new channels), which a tester
// ignores as the original's does. A login storm of N testers sends each of
// the N connections N login events: N² frames, 200 000 at 450 testers, that
// the tester would otherwise decode as JSON while its logins wait.
func isEvent(body []byte) bool {
	const tail = `,"type_id":12X}`
	n := len(body)
	if n < len(tail) || !bytes.Equal(body[n-len(tail):n-2], []byte(tail[:len(tail)-2])) {
		return false
	}
	d := body[n-2]
	return d >= '5' && d <= '9'
}

// parseUint32 reads a decimal uint32, without the allocation of
// strconv.ParseUint(string(b)): it runs for every frame a tester reads.
func parseUint32(b []byte) (uint32, bool) {
	if len(b) == 0 || len(b) > 10 {
		return 0, false
	}
	var n uint64
	for _, d := range b {
		if d < '0' || d > '9' {
			return 0, false
		}
		n = n*10 + uint64(d-'0')
	}
	return uint32(n), n <= 1<<32-1
}

func (c *ccClient) send(m proto.Message) error {
	b, err := proto.Encode(m)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.nc.Write(b)
	return err
}

// call sends the request made by mk (with a fresh id) and waits for its
// answer, at most timeout.
func (c *ccClient) call(mk func(id uint64) proto.Requester, timeout time.Duration) (proto.Message, error) {
	id := c.nextID.Add(1)
	ch := make(chan proto.Message, 1)
	c.mu.Lock()
	c.waiting[id] = ch
	c.mu.Unlock()
	if err := c.send(mk(id)); err != nil {
		return nil, err
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case m := <-ch:
		if e, ok := m.(proto.ErrorResponse); ok {
			return nil, errors.New(e.Value)
		}
		return m, nil
	case <-c.done:
		return nil, fmt.Errorf("[Client][%s] connection closed", c.name)
	case <-t.C:
		return nil, fmt.Errorf("[Client][%s] request timed out after %v", c.name, timeout)
	}
}

func (c *ccClient) close() {
	c.nc.Close()
	<-c.done
}

// login creates the user (any error means "exists") and authenticates it.
func (c *ccClient) login(timeout time.Duration) error {
	c.call(func(id uint64) proto.Requester {
		return proto.CreateUserRequest{RequestID: id, Name: c.name, Password: "123"}
	}, timeout)
	deadline := time.Now().Add(5 * time.Second)
	for {
		m, err := c.call(func(id uint64) proto.Requester {
			return proto.AuthenticateRequest{RequestID: id, Name: c.name, Password: "123"}
		}, timeout)
		if err != nil && strings.HasSuffix(err.Error(), "is already logged in.") && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond) // the previous step's session is still being closed
			continue
		}
		if err != nil {
			return fmt.Errorf("[Server::Error][%s] %v", c.name, err)
		}
		c.user.Store(m.(proto.AuthenticateResponse).User.ID)
		return nil
	}
}

// tester is one tester's bookkeeping.
type tester struct {
	c    *ccClient
	mu   sync.Mutex
	sent map[uint64]time.Time
	rtts []time.Duration
}

func (t *tester) echo(content string, at time.Time) {
	id, err := strconv.ParseUint(content, 10, 64)
	if err != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, ok := t.sent[id]; ok {
		t.rtts = append(t.rtts, at.Sub(s))
		delete(t.sent, id)
	}
}

func runChatcoreOnce(ctx context.Context, cfg chatcoreConfig) (chatcoreResult, error) {
	say := func(format string, args ...any) {
		if cfg.progress != nil {
			fmt.Fprintf(cfg.progress, "chatcore: "+format+"\n", args...)
		}
	}
	root, err := dialChatcore(ctx, cfg.addr, "root-tester", cfg.timeout)
	if err != nil {
		return chatcoreResult{}, fmt.Errorf("[Client][root-tester] Unable to connect to address %s: %w", cfg.addr, err)
	}
	defer root.close()
	if err := root.login(cfg.timeout); err != nil {
		return chatcoreResult{}, err
	}
	m, err := root.call(func(id uint64) proto.Requester {
		return proto.CreateChannelRequest{RequestID: id, Name: "test-channel"}
	}, cfg.timeout)
	if err != nil {
		return chatcoreResult{}, fmt.Errorf("create test-channel: %w", err)
	}
	channel := m.(proto.CreateChannelResponse).Channel.ID

	start := time.Now()
	testers := make([]*tester, cfg.clients)
	errs := make([]error, cfg.clients)
	var wg sync.WaitGroup
	for i := range testers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t, err := prepareTester(ctx, cfg, fmt.Sprintf("tester%d", i), channel)
			testers[i], errs[i] = t, err
		}()
	}
	wg.Wait()
	defer func() {
		for _, t := range testers {
			if t != nil {
				t.c.close()
			}
		}
	}()
	if err := firstErrors(errs, 3); err != nil {
		return chatcoreResult{}, err
	}
	say("%d clients prepared in %v, running load test", cfg.clients, time.Since(start).Round(time.Millisecond))

	// The schedule: tester i starts after stagger·i, sends first one
	// interval after its start, then one interval after each send.
	var next atomic.Uint64
	var sent atomic.Int64
	stop := make(chan struct{})
	stagger := time.Duration(cfg.interval.Milliseconds()/int64(cfg.clients)) * time.Millisecond
	var senders sync.WaitGroup
	for i, t := range testers {
		senders.Add(1)
		go func() {
			defer senders.Done()
			delay := max(stagger*time.Duration(i), 15*time.Millisecond) + cfg.interval
			timer := time.NewTimer(delay)
			defer timer.Stop()
			for {
				select {
				case <-stop:
					return
				case <-ctx.Done():
					return
				case <-timer.C:
				}
				id := next.Add(1) - 1
				t.mu.Lock()
				t.sent[id] = time.Now()
				t.mu.Unlock()
				if t.c.send(proto.WriteChat{Content: strconv.FormatUint(id, 10)}) == nil {
					sent.Add(1)
				}
				timer.Reset(cfg.interval)
			}
		}()
	}
	select {
	case <-time.After(cfg.duration):
	case <-ctx.Done():
	}
	close(stop)
	senders.Wait()

	var all []time.Duration
	rec := load.NewRecorder()
	for _, t := range testers {
		t.mu.Lock()
		for _, d := range t.rtts {
			all = append(all, d)
			rec.Succeed(d)
		}
		t.mu.Unlock()
	}
	res := chatcoreResult{clients: cfg.clients, sent: sent.Load(), completed: int64(len(all)), hdr: rec.Result(cfg.duration)}
	slices.Sort(all)
	pick := func(p float64) time.Duration {
		if len(all) == 0 {
			return 0
		}
		return all[int(p*float64(len(all)-1))] // floor(p·(n−1)), as the original
	}
	res.p50, res.p95, res.p99, res.pmax = pick(0.5), pick(0.95), pick(0.99), pick(1)
	say("total sent: %d, completed: %d, failed: %d", res.sent, res.completed, res.sent-res.completed)
	return res, ctx.Err()
}

func prepareTester(ctx context.Context, cfg chatcoreConfig, name string, channel uint32) (*tester, error) {
	c, err := dialChatcore(ctx, cfg.addr, name, cfg.timeout)
	if err != nil {
		return nil, fmt.Errorf("[Client][%s] Unable to connect to address %s: %w", name, cfg.addr, err)
	}
	t := &tester{c: c, sent: make(map[uint64]time.Time)}
	c.channel = channel
	c.onEcho = t.echo
	if err := c.login(cfg.timeout); err != nil {
		c.close()
		return nil, err
	}
	if _, err := c.call(func(id uint64) proto.Requester {
		return proto.JoinChannelRequest{RequestID: id, ChannelID: channel}
	}, cfg.timeout); err != nil {
		c.close()
		return nil, fmt.Errorf("[Server::Error][%s] join: %w", name, err)
	}
	return t, nil
}

// firstErrors joins the first max errors of errs and counts the others: when
// a login storm times out, 450 identical lines tell nothing that three and a
// count do not.
func firstErrors(errs []error, max int) error {
	var shown []error
	more := 0
	for _, err := range errs {
		switch {
		case err == nil:
		case len(shown) < max:
			shown = append(shown, err)
		default:
			more++
		}
	}
	if more > 0 {
		shown = append(shown, fmt.Errorf("… and %d more", more))
	}
	return errors.Join(shown...)
}
