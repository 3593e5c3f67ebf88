// Package chatcoreload is the chatcore load client: it re-creates the load
// tester of the original chatcore (github.com/ebroschin/chatcore,
// apps/load-tester) step for step, so that its README's table can be
// reproduced against chapter 07's server (or the original):
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
// What the original does on an error while its testers get ready: an error
// answer to a registration means "exists" and the tester goes on to log in;
// any other error answer (to the login, the join, the root's channel) and
// any request unanswered within the timeout (the registration's too) makes
// it log the error and quit at once, with no table. Config.Strict does
// exactly that: the run fails at the first such error, and a server that
// refuses one registration of a burst (Server busy.) fails the whole run,
// because that tester's login then finds no user.
//
// Without Strict, two deviations, made for ladders of steps: a tester that
// cannot get ready is counted in Result.NotReady and the others run, so
// that a ladder shows where a server's login storm overflows; and a login
// refused with "… is already logged in." is retried for a few seconds,
// because a run of several steps on one server reuses the tester names of
// the previous step, whose sessions the server may still be closing. One
// deviation always, harmless: the send time is taken just before the write
// (the original takes it just after queueing, which it can do because its
// echo is handled on the same thread).
//
// loadgen's chatcore mode (the original's table) and tools/cmd/bench's chatcore
// experiment (chapter 07's, with CPU and plots) both drive their servers
// with Run, so that every chatcore number in the course is measured the same
// way.
package chatcoreload

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"serverlab/tools/given/chatcore/proto"
	"serverlab/tools/internal/load"
)

// The original's settings.
const (
	DefaultDuration = 10 * time.Second // from the last ready tester to the evaluation
	DefaultInterval = time.Second      // between one tester's messages
	DefaultTimeout  = 10 * time.Second // per request
	// DefaultSteps are the client counts of the original README's table.
	DefaultSteps = "5,25,100,200,350,450"
)

// Config is one run's settings. Zero durations mean the original's.
type Config struct {
	// Addr is the server's address, or several, comma-separated (servers
	// of one chat, chapter 08's): the root tester uses the first, and the
	// testers are spread over them in turn.
	Addr     string
	Clients  int
	Duration time.Duration // how long the testers send, from the last one ready
	Interval time.Duration // between one tester's messages
	Timeout  time.Duration // limit on each request
	// Logf, if set, gets the run's progress lines (two per run).
	Logf func(format string, args ...any)
	// Deliveries, if set, makes every tester record each message of the
	// channel it receives, from anyone, and Run hold them to one order
	// (Result.Order). It costs the testers a scan of every frame.
	Deliveries bool
	// Strict makes the run the original's on errors: the first tester
	// that cannot get ready (a login or join refused, any request
	// unanswered within Timeout) ends the run with its error and no
	// result, and no login is retried (see the package comment).
	Strict bool
}

// addr is the address tester i connects to: Addr's addresses in turn.
func (cfg Config) addr(i int) string {
	addrs := strings.Split(cfg.Addr, ",")
	return addrs[i%len(addrs)]
}

// Result is one row of the original README's table.
type Result struct {
	Clients         int
	Sent, Completed int64
	// P50 … Max are the original's percentiles: the sorted samples at index
	// floor(p·(n−1)).
	P50, P95, P99, Max time.Duration
	// HDR is the same samples in the course's HDR recorder (load.Recorder).
	HDR load.Result
	// NotReady is how many testers could not connect, log in or join within
	// the timeout (a login storm the server does not absorb): they send
	// nothing, and the run goes on with the others. NotReadyErr says why
	// (the first few errors and a count).
	NotReady    int
	NotReadyErr error
	// Order is the deliveries' check, with Config.Deliveries.
	Order OrderCheck
	// Register and Login are how long the testers' registrations and
	// logins took, each from its send to its answer (error answers too):
	// where a login storm's time goes, and how close it came to Timeout.
	Register, Login Spread
}

// Spread summarises a set of durations: how many, the median, the 99th
// percentile and the largest (index floor(p·(n−1)), as the echo's).
type Spread struct {
	N             int
	P50, P99, Max time.Duration
}

// spreadOf summarises ds (sorting it).
func spreadOf(ds []time.Duration) Spread {
	if len(ds) == 0 {
		return Spread{}
	}
	slices.Sort(ds)
	pick := func(p float64) time.Duration { return ds[int(p*float64(len(ds)-1))] }
	return Spread{N: len(ds), P50: pick(0.5), P99: pick(0.99), Max: pick(1)}
}

func (s Spread) String() string {
	return fmt.Sprintf("%d: p50 %v, p99 %v, max %v", s.N, s.P50.Round(time.Millisecond), s.P99.Round(time.Millisecond), s.Max.Round(time.Millisecond))
}

// Failed is the original's "failed": messages sent whose echo had not come
// back when the run was evaluated.
func (r Result) Failed() int64 { return r.Sent - r.Completed }

// ParseSteps reads a comma-separated list of client counts, e.g.
// DefaultSteps. Its errors speak of the -steps flag that loadgen and bench
// both have.
func ParseSteps(s string) ([]int, error) {
	var counts []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("-steps: %q is not a positive number", f)
		}
		counts = append(counts, n)
	}
	return counts, nil
}

// client is one connection of the load tester: a reader goroutine routes
// answers to the waiting RPC by request id, and echoes to onEcho.
type client struct {
	name    string
	ctx     context.Context // ends the calls of a run that is stopping
	nc      net.Conn
	wmu     sync.Mutex
	nextID  atomic.Uint64
	mu      sync.Mutex
	waiting map[uint64]chan proto.Message
	user    atomic.Uint32 // set at login, read by the reader
	channel uint32        // set before the reader can see a 103
	onEcho  func(content string, at time.Time)
	// onChat, if set, gets the content of every 103 in the channel, in
	// the order they arrive (Config.Deliveries).
	onChat func(content []byte)
	done   chan struct{}
	// registered and loggedIn are how long the registration and the last
	// login took (0: not answered).
	registered, loggedIn time.Duration
}

func dial(ctx context.Context, addr, name string, timeout time.Duration) (*client, error) {
	d := net.Dialer{Timeout: timeout}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	c := &client{name: name, ctx: ctx, nc: nc, waiting: make(map[uint64]chan proto.Message), done: make(chan struct{})}
	go c.readLoop()
	return c, nil
}

func (c *client) readLoop() {
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
		if c.onChat != nil {
			if ch, content, ok := chatOf(body); ok && ch == c.channel {
				c.onChat(content)
			}
		}
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
func (c *client) othersEcho(body []byte) bool {
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

func (c *client) send(m proto.Message) error {
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
func (c *client) call(mk func(id uint64) proto.Requester, timeout time.Duration) (proto.Message, error) {
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
			return nil, serverError(e.Value)
		}
		return m, nil
	case <-c.done:
		return nil, fmt.Errorf("[Client][%s] connection closed", c.name)
	case <-t.C:
		return nil, fmt.Errorf("[Client][%s] request timed out after %v", c.name, timeout)
	case <-c.ctx.Done():
		return nil, fmt.Errorf("[Client][%s] stopped: %w", c.name, context.Cause(c.ctx))
	}
}

// serverError is an error answer (100) from the server: its text.
type serverError string

func (e serverError) Error() string { return string(e) }

func (c *client) close() {
	c.nc.Close()
	<-c.done
}

// hangUpGrace bounds how long closeAll waits for the server to end the
// connections it was told are over.
const hangUpGrace = 2 * time.Second

// closeAll ends every client's connection the way a polite client does:
// its write side first, then, once the server has closed its side (it has
// logged the user out by then) or hangUpGrace has passed, the socket. So a
// run that follows on the same server (the steps of bench chatcore) does
// not find its users still logged in from this one, however busy the
// machine.
func closeAll(clients []*client) {
	for _, c := range clients {
		if hc, ok := c.nc.(interface{ CloseWrite() error }); ok {
			hc.CloseWrite()
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), hangUpGrace)
	defer cancel()
	for _, c := range clients {
		select {
		case <-c.done:
		case <-ctx.Done():
		}
		c.close()
	}
}

// login creates the user (an error answer means "exists") and authenticates
// it. Strict, a registration unanswered in time is an error, as in the
// original, and a refused login is not retried.
func (c *client) login(timeout time.Duration, strict bool) error {
	sent := time.Now()
	_, err := c.call(func(id uint64) proto.Requester {
		return proto.CreateUserRequest{RequestID: id, Name: c.name, Password: "123"}
	}, timeout)
	var answer serverError
	if err == nil || errors.As(err, &answer) {
		c.registered = time.Since(sent)
	}
	if strict && err != nil && !errors.As(err, &answer) {
		return fmt.Errorf("create user: %w", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		sent := time.Now()
		m, err := c.call(func(id uint64) proto.Requester {
			return proto.AuthenticateRequest{RequestID: id, Name: c.name, Password: "123"}
		}, timeout)
		if err == nil || errors.As(err, &answer) {
			c.loggedIn = time.Since(sent)
		}
		if err != nil && !strict && strings.HasSuffix(err.Error(), "is already logged in.") && time.Now().Before(deadline) {
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
	c    *client
	mu   sync.Mutex
	sent map[uint64]time.Time
	rtts []time.Duration
	got  []string // with Config.Deliveries: the channel's messages, as they arrived
}

func (t *tester) record(content []byte) {
	t.mu.Lock()
	t.got = append(t.got, string(content))
	t.mu.Unlock()
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

// Run runs the original's method once with cfg.Clients testers against the
// server at cfg.Addr. Users and the channel that exist already (an earlier
// run on the same server) are reused, as the original's tester does. A
// tester that cannot connect, log in or join within the timeout is counted
// in NotReady and the others run (the original's tester ends there, and
// with it a ladder of steps); Run fails only if the root tester or every
// tester cannot start.
func Run(ctx context.Context, cfg Config) (Result, error) {
	cfg = cfg.withDefaults()
	if cfg.Clients < 1 {
		return Result{}, fmt.Errorf("chatcoreload: %d clients: want at least 1", cfg.Clients)
	}
	say := func(format string, args ...any) {
		if cfg.Logf != nil {
			cfg.Logf(format, args...)
		}
	}
	root, err := dial(ctx, cfg.addr(0), "root-tester", cfg.Timeout)
	if err != nil {
		return Result{}, fmt.Errorf("[Client][root-tester] Unable to connect to address %s: %w", cfg.addr(0), err)
	}
	defer root.close()
	if err := root.login(cfg.Timeout, cfg.Strict); err != nil {
		return Result{}, err
	}
	m, err := root.call(func(id uint64) proto.Requester {
		return proto.CreateChannelRequest{RequestID: id, Name: "test-channel"}
	}, cfg.Timeout)
	if err != nil {
		return Result{}, fmt.Errorf("create test-channel: %w", err)
	}
	channel := m.(proto.CreateChannelResponse).Channel.ID

	start := time.Now()
	testers := make([]*tester, cfg.Clients)
	errs := make([]error, cfg.Clients)
	setup := make([][2]time.Duration, cfg.Clients) // each tester's registration and login
	// Strict, the first error stops the others' preparation (the original
	// quits there); it is the cause of prepCtx.
	prepCtx, quit := context.WithCancelCause(ctx)
	defer quit(nil)
	var wg sync.WaitGroup
	for i := range testers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t, err := prepareTester(prepCtx, cfg, cfg.addr(i), fmt.Sprintf("tester%d", i), channel, &setup[i])
			testers[i], errs[i] = t, err
			if err != nil && cfg.Strict {
				quit(err)
			}
		}()
	}
	wg.Wait()
	defer func() {
		var clients []*client
		for _, t := range testers {
			if t != nil {
				clients = append(clients, t.c)
			}
		}
		closeAll(clients)
	}()
	notReady := 0
	for _, err := range errs {
		if err != nil {
			notReady++
		}
	}
	notReadyErr := firstErrors(errs, 3)
	var registered, loggedIn []time.Duration
	for _, d := range setup {
		if d[0] > 0 {
			registered = append(registered, d[0])
		}
		if d[1] > 0 {
			loggedIn = append(loggedIn, d[1])
		}
	}
	reg, login := spreadOf(registered), spreadOf(loggedIn)
	say("registrations %v; logins %v", reg, login)
	if notReady > 0 && cfg.Strict {
		return Result{Clients: cfg.Clients, NotReady: notReady, NotReadyErr: notReadyErr, Register: reg, Login: login},
			fmt.Errorf("the original's tester quits after %v: %w", time.Since(start).Round(time.Millisecond), context.Cause(prepCtx))
	}
	if notReady == cfg.Clients {
		return Result{}, notReadyErr
	}
	if notReady > 0 {
		say("%d of %d clients not ready (they send nothing): %v", notReady, cfg.Clients, strings.ReplaceAll(notReadyErr.Error(), "\n", "; "))
	}
	say("%d clients prepared in %v, running load test", cfg.Clients-notReady, time.Since(start).Round(time.Millisecond))

	// The schedule: tester i starts after stagger·i, sends first one
	// interval after its start, then one interval after each send.
	var next atomic.Uint64
	var sent atomic.Int64
	stop := make(chan struct{})
	stagger := time.Duration(cfg.Interval.Milliseconds()/int64(cfg.Clients)) * time.Millisecond
	var senders sync.WaitGroup
	for i, t := range testers {
		if t == nil {
			continue // not ready: its slot in the schedule stays empty
		}
		senders.Add(1)
		go func() {
			defer senders.Done()
			delay := max(stagger*time.Duration(i), 15*time.Millisecond) + cfg.Interval
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
				timer.Reset(cfg.Interval)
			}
		}()
	}
	select {
	case <-time.After(cfg.Duration):
	case <-ctx.Done():
	}
	close(stop)
	senders.Wait()

	var all []time.Duration
	rec := load.NewRecorder()
	for _, t := range testers {
		if t == nil {
			continue
		}
		t.mu.Lock()
		for _, d := range t.rtts {
			all = append(all, d)
			rec.Succeed(d)
		}
		t.mu.Unlock()
	}
	res := Result{Clients: cfg.Clients, Sent: sent.Load(), Completed: int64(len(all)), HDR: rec.Result(cfg.Duration),
		NotReady: notReady, NotReadyErr: notReadyErr, Register: reg, Login: login}
	slices.Sort(all)
	pick := func(p float64) time.Duration {
		if len(all) == 0 {
			return 0
		}
		return all[int(p*float64(len(all)-1))] // floor(p·(n−1)), as the original
	}
	res.P50, res.P95, res.P99, res.Max = pick(0.5), pick(0.95), pick(0.99), pick(1)
	if cfg.Deliveries {
		var lists [][]string
		for _, t := range testers {
			if t != nil {
				t.c.close() // its reader has stopped: got is complete
				lists = append(lists, t.got)
			}
		}
		res.Order = checkOrder(lists)
	}
	say("total sent: %d, completed: %d, failed: %d", res.Sent, res.Completed, res.Failed())
	return res, ctx.Err()
}

// prepareTester connects, registers, logs in and joins one tester, and puts
// how long its registration and login took in setup.
func prepareTester(ctx context.Context, cfg Config, addr, name string, channel uint32, setup *[2]time.Duration) (*tester, error) {
	c, err := dial(ctx, addr, name, cfg.Timeout)
	if err != nil {
		return nil, fmt.Errorf("[Client][%s] Unable to connect to address %s: %w", name, addr, err)
	}
	t := &tester{c: c, sent: make(map[uint64]time.Time)}
	c.channel = channel
	c.onEcho = t.echo
	if cfg.Deliveries {
		c.onChat = t.record
	}
	err = c.login(cfg.Timeout, cfg.Strict)
	setup[0], setup[1] = c.registered, c.loggedIn
	if err != nil {
		c.close()
		return nil, err
	}
	if _, err := c.call(func(id uint64) proto.Requester {
		return proto.JoinChannelRequest{RequestID: id, ChannelID: channel}
	}, cfg.Timeout); err != nil {
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

func (c Config) withDefaults() Config {
	if c.Duration <= 0 {
		c.Duration = DefaultDuration
	}
	if c.Interval <= 0 {
		c.Interval = DefaultInterval
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	return c
}
