package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"serverlab/tools/internal/load"
)

// The http mode drives an HTTP/1.0 server the way httperf and wrk with
// "Connection: close" do: every request is a new connection carrying one GET,
// answered and closed by the server (chapter 06, docs/protocols.md §4).
//
// Closed loop: -clients connections' worth of users for -duration (or
// -requests each). Open loop, httperf-style: -rate new connections per
// second, -num-conns in all.
func init() {
	register(mode{
		name:    "http",
		summary: "HTTP/1.0 GET, one new connection per request (httperf/wrk Connection: close)",
		run:     runHTTP,
	})
}

func runHTTP(ctx context.Context, env *env, args []string) error {
	fs := newFlagSet(env, "http")
	common := addCommonFlags(fs, "127.0.0.1:10000")
	uri := fs.String("uri", "/", "the `URI` to GET")
	numConns := fs.Int("num-conns", 0, "with -rate: connections (requests) in all, as httperf's --num-conns")
	status := fs.Int("status", 200, "the status code a reply must have")
	host := fs.String("host", "", "a Host header to send (default: none, as HTTP/1.0 allows)")
	engine := fs.String("engine", defaultEngine, "closed loop: `epoll` (a few event loops drive non-blocking sockets, like wrk; Linux) or goroutine (one per client, through net.Dial); -rate always uses goroutines")
	loops := fs.Int("loops", runtime.GOMAXPROCS(0), "with -engine epoll: event-loop goroutines")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *numConns > 0 {
		if common.rate <= 0 {
			return usageError{errors.New("-num-conns needs -rate (closed loop: use -clients and -duration)")}
		}
		if !flagSet(fs, "clients") {
			common.clients = min(*numConns, 1000) // httperf: a connection per arrival, however many are open
		}
		common.requests = (*numConns + common.clients - 1) / common.clients
	}
	req := "GET " + *uri + " HTTP/1.0\r\n"
	if *host != "" {
		req += "Host: " + *host + "\r\n"
	}
	req += "\r\n"
	check := replyChecker([]byte(strconv.Itoa(*status)))
	switch {
	case *engine != "epoll" && *engine != "goroutine":
		return usageError{fmt.Errorf("-engine %q: want epoll or goroutine", *engine)}
	case *engine == "epoll" && common.rate <= 0:
		return runHTTPEpoll(ctx, env, common, []byte(req), check, *loops)
	case *engine == "epoll" && flagSet(fs, "engine"):
		return usageError{errors.New("-engine epoll is closed-loop only; -rate uses -engine goroutine")}
	}
	raddr, err := net.ResolveTCPAddr("tcp", common.addr)
	if err != nil {
		return err
	}
	newClient := func(ctx context.Context, id int) (load.Client, error) {
		c := &httpClient{addr: raddr, timeout: common.timeout, req: []byte(req),
			check: check, buf: make([]byte, 64<<10)}
		c.untie = context.AfterFunc(ctx, c.abort)
		return c, nil
	}
	if *numConns > 0 {
		res, err := load.FixedRate{Rate: common.rate, Requests: *numConns, Clients: common.clients,
			MaxInFlight: common.maxInFlight, NewClient: newClient}.Run(ctx)
		if rerr := common.report(env, "http", res); rerr != nil {
			return rerr
		}
		return err
	}
	return common.run(ctx, env, "http", newClient)
}

// flagSet reports whether the flag called name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// httpClient makes one connection per request. The load generator must never
// be the bottleneck, so a request costs as little as it can: the address is
// resolved once, the dial takes no context (a cancellable context costs a
// goroutine per dial), the run's cancellation is watched once per client
// rather than once per request, and the read buffer is reused.
type httpClient struct {
	addr    *net.TCPAddr
	timeout time.Duration
	req     []byte
	check   func(head []byte, total int) error // see replyChecker
	buf     []byte
	untie   func() bool // stops watching the run's context

	mu      sync.Mutex
	conn    *net.TCPConn // the request in progress, for abort
	aborted bool
}

// Do connects, sends the request, reads the reply to the end and checks its
// status line and, when there is one, its Content-Length. The connection
// time counts: a server that accepts late is slow.
func (c *httpClient) Do(ctx context.Context) error {
	conn, err := c.dial()
	if err != nil {
		return err
	}
	defer c.hangUp(conn)
	if err := conn.SetDeadline(time.Now().Add(c.timeout)); err != nil {
		return err
	}
	if _, err := conn.Write(c.req); err != nil {
		return err
	}
	return c.readReply(conn)
}

// readReply reads until the server closes the connection, keeping the first
// buffer-full for the checks.
func (c *httpClient) readReply(conn net.Conn) error {
	n, total := 0, 0
	for {
		var m int
		var err error
		if n < len(c.buf) {
			m, err = conn.Read(c.buf[n:])
			n += m
		} else {
			m, err = conn.Read(c.buf[len(c.buf)/2:]) // past the head: just count
		}
		total += m
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
	}
	return c.check(c.buf[:n], total)
}

// runHTTPEpoll runs the closed loop on load.OneShot's event loops instead of
// a goroutine per client: about half the CPU per request (see
// docs/bench-ch06.md), which is what lets loadgen keep up with wrk.
func runHTTPEpoll(ctx context.Context, env *env, common *commonFlags, req []byte, check func([]byte, int) error, loops int) error {
	var progress io.Writer
	if env.terminal && !common.quiet {
		progress = env.stderr
	}
	duration := common.duration
	if common.requests == 0 && duration == 0 {
		duration = defaultDuration
	}
	// One P more than there are loops: while a loop blocks in epoll_wait,
	// the runtime's sysmon then sees an idle P and leaves the loop's P
	// alone; with none idle it hands that P to another thread, waking it,
	// almost every wait. Measured: 0.65–0.84 instead of 0.98–1.45 context
	// switches and 54–56 instead of 56–72 µs of CPU per request
	// (docs/bench-ch06.md).
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(loops, 1) + 1))
	res, err := load.OneShot{
		Addr: common.addr, Request: req, Clients: common.clients, Requests: common.requests,
		Duration: duration, Timeout: common.timeout, Loops: loops, Check: check, Progress: progress,
	}.Run(ctx)
	if errors.Is(err, load.ErrOneShotUnsupported) {
		return usageError{fmt.Errorf("%w (-engine goroutine works everywhere)", err)}
	}
	if rerr := common.report(env, "http", res); rerr != nil {
		return rerr
	}
	return err
}

// replyChecker returns the check of a reply's head (its first bytes) and
// total length: the status line must carry status and, if the header has a
// Content-Length, the body must be that long.
func replyChecker(status []byte) func(head []byte, total int) error {
	return func(head []byte, total int) error { return checkReply(head, total, status) }
}

// checkReply is replyChecker's check. It runs once per request, so it cuts
// the head apart in place instead of splitting it into new slices.
func checkReply(head []byte, total int, status []byte) error {
	line, _, _ := bytes.Cut(head, []byte("\r\n"))
	version, rest, _ := bytes.Cut(line, []byte(" "))
	code, _, _ := bytes.Cut(bytes.TrimLeft(rest, " "), []byte(" "))
	if !bytes.HasPrefix(version, []byte("HTTP/1.")) || !bytes.Equal(code, status) {
		if len(head) == 0 {
			return load.WithKind(load.KindEOF, errors.New("connection closed without a reply"))
		}
		return load.WithKind("status", fmt.Errorf("%w: status line %q", load.ErrBadReply, line))
	}
	header, _, ok := bytes.Cut(head, []byte("\r\n\r\n"))
	if !ok {
		return fmt.Errorf("%w: no end of header in %q", load.ErrBadReply, head[:min(len(head), 200)])
	}
	fields := bytes.TrimPrefix(header[len(line):], []byte("\r\n")) // the header lines after the status line
	for len(fields) > 0 {
		var h []byte
		h, fields, _ = bytes.Cut(fields, []byte("\r\n"))
		name, value, _ := bytes.Cut(h, []byte(":"))
		if !bytes.EqualFold(name, []byte("Content-Length")) {
			continue
		}
		want, err := strconv.Atoi(string(bytes.TrimSpace(value)))
		if got := total - len(header) - 4; err != nil || got != want {
			return load.WithKind("short body", fmt.Errorf("%w: Content-Length %q, body %d bytes", load.ErrBadReply, value, got))
		}
	}
	return nil
}

// dialer connects without a context: a dial with a timeout or a cancellable
// context costs a goroutine and a timer each, which made dialling most of the
// load generator's work. Instead, TCP_SYNCNT bounds how often the kernel
// resends an unanswered SYN (2: it gives up after about 7 s), and keep-alive is
// off (one request per connection: its probes are pointless syscalls).
var dialer = net.Dialer{
	KeepAlive: -1,
	Control: func(network, address string, c syscall.RawConn) error {
		var err error
		c.Control(func(fd uintptr) { err = limitSYNs(int(fd)) })
		return err
	},
}

// dial connects and records the connection for abort.
func (c *httpClient) dial() (*net.TCPConn, error) {
	nc, err := dialer.Dial("tcp", c.addr.String())
	if err != nil {
		return nil, err
	}
	conn := nc.(*net.TCPConn)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.aborted {
		conn.Close()
		return nil, context.Canceled
	}
	c.conn = conn
	return conn, nil
}

// hangUp closes the request's connection.
func (c *httpClient) hangUp(conn *net.TCPConn) {
	c.mu.Lock()
	c.conn = nil
	c.mu.Unlock()
	conn.Close()
}

// abort runs when the run is cancelled: it closes the connection in use, so
// that Do returns at once instead of at its deadline.
func (c *httpClient) abort() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.aborted = true
	if c.conn != nil {
		c.conn.Close()
	}
}

// Close stops watching the run's context; each request's connection is
// closed by Do.
func (c *httpClient) Close() error {
	c.untie()
	return nil
}
