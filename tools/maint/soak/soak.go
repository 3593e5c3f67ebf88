//go:build linux

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"serverlab/tools/internal/procs"
	"serverlab/tools/internal/procstat"
)

// server is one reference server and what the soak needs to know about it.
type server struct {
	name string
	pkg  string // its command, built with go build
	// args are its command-line arguments, serving dir on port.
	args func(dir string, port int) []string
	// setup prepares dir (users.txt, stock.txt, a document root).
	setup func(dir string) error
	// slowloris is the request prefix a slowloris sends one byte at a time.
	slowloris string
	// nonReader dials one client that asks for a lot and will never read,
	// and returns what it sends again and again (nil: nothing).
	nonReader func(addr string) (net.Conn, []byte, error)
	// extra starts protocol-specific attackers; they stop when stop closes.
	extra func(addr string, stop <-chan struct{}, wg *sync.WaitGroup)
	// client runs one well-behaved client until stop closes, recording each
	// exchange in st.
	client func(addr string, stop <-chan struct{}, st *stats)
	// clients is how many well-behaved clients run at once.
	clients int
	// check, after the server has stopped cleanly, counts acknowledged data
	// that is missing (e.g. trades absent from stock.txt).
	check func(dir string, st *stats) (lost int64, why string)

	goal    time.Duration // the well-behaved clients' p99 must stay under it
	rssMiB  int           // the peak RSS must stay under it
	rssWhy  string        // where the bound comes from
	goalWhy string
}

// stats is what the well-behaved clients measured.
type stats struct {
	mu        sync.Mutex
	latencies []time.Duration
	errors    int64
	lastErr   string
	acked     map[string]int64 // acknowledged effects, by kind (e.g. "buy 1")
	lost      int64            // acknowledged data the clients saw go missing
}

func (st *stats) ok(d time.Duration) {
	st.mu.Lock()
	st.latencies = append(st.latencies, d)
	st.mu.Unlock()
}

func (st *stats) fail(err error) {
	st.mu.Lock()
	st.errors++
	st.lastErr = err.Error()
	st.mu.Unlock()
}

func (st *stats) ack(kind string, n int64) {
	st.mu.Lock()
	if st.acked == nil {
		st.acked = map[string]int64{}
	}
	st.acked[kind] += n
	st.mu.Unlock()
}

// result is one server's line of the report.
type result struct {
	name        string
	crashed     bool
	exit        string // how the process ended once told to stop
	n, errors   int64
	lastErr     string
	p50, p99    time.Duration
	goal        time.Duration
	goalWhy     string
	rssMiB      float64
	bound       int
	rssWhy      string
	lost        int64
	lostWhy     string
	attackStats string
	setupErr    string
}

func (r result) ok() bool {
	return r.setupErr == "" && !r.crashed && r.lost == 0 && r.p99 <= r.goal && r.rssMiB <= float64(r.bound) && r.n > 0
}

func (r result) summary() string {
	if r.setupErr != "" {
		return "not run: " + r.setupErr
	}
	return fmt.Sprintf("crashed=%v exit=%s exchanges=%d errors=%d p50=%v p99=%v (goal %v) peakRSS=%.1fMiB (bound %d) lost=%d %s",
		r.crashed, r.exit, r.n, r.errors, r.p50.Round(time.Microsecond), r.p99.Round(time.Microsecond), r.goal,
		r.rssMiB, r.bound, r.lost, r.attackStats)
}

// soak runs one server under the load for d and measures it.
func soak(s server, work string, d time.Duration, nofile uint64) result {
	r := result{name: s.name, goal: s.goal, goalWhy: s.goalWhy, bound: s.rssMiB, rssWhy: s.rssWhy}
	dir := filepath.Join(work, s.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.setupErr = err.Error()
		return r
	}
	bin, err := build(s.pkg, work)
	if err == nil {
		err = s.setup(dir)
	}
	if err != nil {
		r.setupErr = err.Error()
		return r
	}
	port, err := procs.FreePort()
	if err != nil {
		r.setupErr = err.Error()
		return r
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	p, err := startServer(bin, s.args(dir, port), dir, nofile)
	if err != nil {
		r.setupErr = err.Error()
		return r
	}
	if err := p.waitListening(addr); err != nil {
		p.stop()
		r.setupErr = err.Error() + " (log: " + p.logTail() + ")"
		return r
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var st stats
	att := startAttacks(s, addr, int(nofile)+256, stop, &wg)
	for range s.clients {
		wg.Add(1)
		go func() { defer wg.Done(); s.client(addr, stop, &st) }()
	}
	select {
	case <-time.After(d):
	case <-p.Done():
	}
	close(stop)
	wg.Wait()

	r.rssMiB = p.peakRSSMiB()
	r.crashed = !p.Alive()
	r.exit = p.stop()
	r.attackStats = att.String()
	r.n, r.errors, r.lastErr, r.lost = int64(len(st.latencies)), st.errors, st.lastErr, st.lost
	if len(st.latencies) > 0 {
		slices.Sort(st.latencies)
		r.p50 = st.latencies[len(st.latencies)/2]
		r.p99 = st.latencies[min(len(st.latencies)-1, len(st.latencies)*99/100)]
	} else {
		r.p99 = d // nothing got through: as bad as it gets
	}
	if s.check != nil && !r.crashed {
		lost, why := s.check(dir, &st)
		r.lost += lost
		r.lostWhy = why
	}
	if r.crashed {
		r.lostWhy = "server log: " + p.logTail()
	}
	return r
}

// proc is a server process and the file its output goes to.
type proc struct {
	*procs.Process
	log string
}

const (
	// readyTimeout bounds how long a server may take to accept its first
	// connection.
	readyTimeout = 15 * time.Second
	// stopGrace is how long a server may take to exit on SIGTERM.
	stopGrace = 10 * time.Second
)

func startServer(bin string, args []string, dir string, nofile uint64) (*proc, error) {
	logPath := filepath.Join(dir, "server.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	p, err := procs.Start(procs.Spec{Path: bin, Args: args, Dir: dir, Stdout: logf, Stderr: logf})
	if err != nil {
		return nil, err
	}
	lim := unix.Rlimit{Cur: nofile, Max: nofile}
	if err := unix.Prlimit(p.PID(), unix.RLIMIT_NOFILE, &lim, nil); err != nil {
		p.Kill()
		return nil, fmt.Errorf("lowering the server's RLIMIT_NOFILE: %w", err)
	}
	return &proc{Process: p, log: logPath}, nil
}

// waitListening waits until addr accepts connections, or the process dies.
func (p *proc) waitListening(addr string) error {
	err := p.WaitDialable(context.Background(), addr, readyTimeout)
	if errors.Is(err, procs.ErrExited) {
		err = fmt.Errorf("%w: %s", err, errText(p.Err()))
	}
	return err
}

// peakRSSMiB is the process's peak resident set size (VmHWM), in MiB.
// It is 0 once the process has exited.
func (p *proc) peakRSSMiB() float64 {
	s, err := procstat.Read(p.PID())
	if err != nil {
		return 0
	}
	return float64(s.PeakRSSKiB) / 1024
}

// stop sends SIGTERM, waits up to stopGrace (then SIGKILL), and says how it
// ended.
func (p *proc) stop() string {
	switch p.Stop(stopGrace) {
	case procs.ExitedBefore:
		return "exited by itself: " + errText(p.Err())
	case procs.Terminated:
		return "SIGTERM: " + errText(p.Err())
	default:
		return fmt.Sprintf("ignored SIGTERM for %v: killed", stopGrace)
	}
}

func errText(err error) string {
	if err == nil {
		return "exit 0"
	}
	return err.Error()
}

func (p *proc) logTail() string {
	b, _ := os.ReadFile(p.log)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-2):], " | ")
}

// attacks counts what the attackers did.
type attacks struct {
	idleHeld, idleRefused, slow, nonReaders, bursts, resets atomic.Int64
}

func (a *attacks) String() string {
	return fmt.Sprintf("(attackers: idle %d held / %d dials refused, %d slowloris, %d non-readers, %d bursts, %d resets)",
		a.idleHeld.Load(), a.idleRefused.Load(), a.slow.Load(), a.nonReaders.Load(), a.bursts.Load(), a.resets.Load())
}

// attackNames are the attacks, as -attacks names them.
var attackNames = []string{"idle", "slowloris", "nonreaders", "bursts", "resets", "protocol"}

// enabled is the set of attacks -attacks selected.
var enabled = map[string]bool{}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// startAttacks starts every attacker; they stop when stop is closed.
func startAttacks(s server, addr string, idle int, stop <-chan struct{}, wg *sync.WaitGroup) *attacks {
	a := &attacks{}
	run := func(f func()) { wg.Add(1); go func() { defer wg.Done(); f() }() }
	if enabled["idle"] {
		run(func() { idleFlood(addr, idle, stop, a) })
	}
	for range 10 * b2i(enabled["slowloris"]) {
		run(func() { slowloris(addr, s.slowloris, stop, a) })
	}
	for range 20 * b2i(enabled["nonreaders"]) {
		run(func() { nonReader(addr, s.nonReader, stop, a) })
	}
	for range 2 * b2i(enabled["bursts"]) {
		run(func() { bursts(addr, stop, a) })
	}
	if enabled["resets"] {
		run(func() { resets(addr, stop, a) })
	}
	if s.extra != nil && enabled["protocol"] {
		s.extra(addr, stop, wg)
	}
	return a
}

func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// pause waits d, or less if stop closes.
func pause(stop <-chan struct{}, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-stop:
	case <-t.C:
	}
}

// attackerAddr is where the attackers dial from: 127.0.0.2, not the honest
// clients' 127.0.0.1, as on a real network they would be other hosts. A
// server that counts connections per client address (chapter 07's
// -max-conns-per-address) can then tell the flood from the honest clients;
// on one address they would share its cap.
var attackerAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}

// dialAttack dials addr from attackerAddr.
func dialAttack(addr string, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout, LocalAddr: attackerAddr}
	return d.Dial("tcp", addr)
}

// idleFlood keeps up to n idle connections open, re-dialling those the
// server drops.
func idleFlood(addr string, n int, stop <-chan struct{}, a *attacks) {
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	dead := make(chan net.Conn, n)
	for !stopped(stop) {
		for len(conns) < n && !stopped(stop) {
			c, err := dialAttack(addr, 200*time.Millisecond)
			if err != nil {
				a.idleRefused.Add(1)
				break
			}
			conns = append(conns, c)
			a.idleHeld.Add(1)
			go func() { // notice when the server drops it
				c.Read(make([]byte, 1))
				dead <- c
			}()
		}
		pause(stop, 100*time.Millisecond)
	drain:
		for {
			select {
			case c := <-dead:
				c.Close()
				conns = slices.DeleteFunc(conns, func(x net.Conn) bool { return x == c })
			default:
				break drain
			}
		}
	}
}

// slowloris sends prefix one byte every 500 ms, re-dialling when dropped.
func slowloris(addr, prefix string, stop <-chan struct{}, a *attacks) {
	for !stopped(stop) {
		c, err := dialAttack(addr, time.Second)
		if err != nil {
			pause(stop, 100*time.Millisecond)
			continue
		}
		a.slow.Add(1)
		for i := 0; !stopped(stop); i++ {
			c.SetWriteDeadline(time.Now().Add(time.Second))
			if _, err := c.Write([]byte{prefix[i%len(prefix)]}); err != nil {
				break
			}
			pause(stop, 500*time.Millisecond)
		}
		c.Close()
	}
}

// nonReader keeps one client that never reads, re-starting it when the
// server drops it. start dials and sends the first request; the client then
// sends again every 250 ms (pipelined requests it will never read the answers
// of), which is also how it notices being dropped: the write fails.
func nonReader(addr string, start func(string) (net.Conn, []byte, error), stop <-chan struct{}, a *attacks) {
	for !stopped(stop) {
		c, again, err := start(addr)
		if err != nil {
			pause(stop, 200*time.Millisecond)
			continue
		}
		a.nonReaders.Add(1)
		for !stopped(stop) {
			pause(stop, 250*time.Millisecond)
			if again == nil {
				continue
			}
			c.SetWriteDeadline(time.Now().Add(time.Second))
			if _, err := c.Write(again); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
				break // dropped
			}
		}
		c.Close()
	}
}

// bursts sends 64 KiB of random bytes and closes, again and again.
func bursts(addr string, stop <-chan struct{}, a *attacks) {
	rng := rand.New(rand.NewPCG(1, 2))
	junk := make([]byte, 64<<10)
	for !stopped(stop) {
		for i := range junk {
			junk[i] = byte(rng.Uint32())
		}
		c, err := dialAttack(addr, time.Second)
		if err != nil {
			pause(stop, 100*time.Millisecond)
			continue
		}
		c.SetWriteDeadline(time.Now().Add(500 * time.Millisecond))
		c.Write(junk)
		c.Close()
		a.bursts.Add(1)
		pause(stop, 50*time.Millisecond)
	}
}

// resets connects and closes with a reset, as fast as it can (with a breath
// between rounds).
func resets(addr string, stop <-chan struct{}, a *attacks) {
	for !stopped(stop) {
		for range 20 {
			c, err := dialAttack(addr, time.Second)
			if err != nil {
				break
			}
			c.(*net.TCPConn).SetLinger(0)
			c.Close()
			a.resets.Add(1)
		}
		pause(stop, 20*time.Millisecond)
	}
}

// lineClient is a persistent text-protocol connection with deadlines.
type lineClient struct {
	c net.Conn
	r *bufio.Reader
}

func dialLine(addr string) (*lineClient, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return nil, err
	}
	return &lineClient{c: c, r: bufio.NewReader(c)}, nil
}

// soakTimeout bounds every exchange of a well-behaved client.
const soakTimeout = 5 * time.Second
