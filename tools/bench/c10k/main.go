//go:build unix

// Command c10k is chapter 05's experiment: the original chat write-up's
// performance analysis (CPU%, VmRSS, PSS and delivery latency vs clients,
// threaded vs select) extended to C10K, chapter 02's goroutine-per-client
// server against chapter 05's epoll loop.
//
//	go run ./tools/bench/c10k -out docs/bench-ch05
//
// For each client count, and for each server in turn (interleaved, so that
// both see the same noise), it starts the server as a child process, logs N
// clients in, measures the server idle (CPU%, RSS, PSS, with tools/monitor's
// procstat), then makes the clients broadcast -rate messages a second for
// -active, every receiver timing every delivery. It writes results.csv,
// results.md (a table) and PNG plots to -out.
package main

import (
	"context"
	"encoding/binary"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"

	"serverlab/tools/monitor/procstat"
	"serverlab/tools/wire"
)

// server is one chat server under test: a label and its Go package.
type server struct {
	label, pkg, bin string
}

// result is one measured run: one server, one client count.
type result struct {
	server        string
	clients       int
	loggedIn      int
	baseRSS       int64 // KiB, before any client
	idleRSS       int64 // KiB, with every client idle
	idlePSS       int64
	idleCPU       float64 // % of one core
	activeCPU     float64
	sent          int64
	delivered     int64
	expected      int64
	p50, p95, p99 float64 // ms
	cpuPerMsg     float64 // µs of server CPU per delivered message
	throughput    float64 // deliveries per second, from the first send to the last delivery
}

func (r result) rssPerConn() float64 {
	if r.loggedIn == 0 {
		return 0
	}
	return float64(r.idleRSS-r.baseRSS) / float64(r.loggedIn)
}

func main() {
	servers := flag.String("servers", "ch02=./solutions/02/cmd/chatserver,ch05=./solutions/05/cmd/chatserver",
		"servers to compare: label=package,…")
	clientList := flag.String("clients", "2,10,100,1000,5000,10000", "client counts")
	rate := flag.Float64("rate", 5, "broadcasts per second during the active phase (senders take turns)")
	size := flag.Int("size", 64, "payload bytes per broadcast (≥ 8: the send time)")
	idle := flag.Duration("idle", 3*time.Second, "idle measurement window")
	active := flag.Duration("active", 5*time.Second, "active phase")
	rounds := flag.Int("rounds", 1, "repeat every measurement this many times (interleaved)")
	out := flag.String("out", "docs/bench-ch05", "folder for results.csv, results.md and the plots")
	flag.Parse()

	raiseFDLimit()
	list, err := buildServers(*servers)
	if err != nil {
		log.Fatal(err)
	}
	counts, err := parseInts(*clientList)
	if err != nil {
		log.Fatal(err)
	}
	var results []result
	for _, n := range counts {
		for round := range *rounds {
			for _, s := range list {
				r, err := runOne(s, n, *rate, *size, *idle, *active)
				if err != nil {
					log.Printf("%s, %d clients, round %d: %v", s.label, n, round+1, err)
					continue
				}
				log.Printf("%s %5d clients: RSS/conn %.2f KiB, idle CPU %.1f%%, active CPU %.1f%%, p99 %.2f ms, %.1f µs/msg, delivered %d/%d",
					s.label, n, r.rssPerConn(), r.idleCPU, r.activeCPU, r.p99, r.cpuPerMsg, r.delivered, r.expected)
				results = append(results, r)
			}
		}
	}
	if err := writeAll(*out, results); err != nil {
		log.Fatal(err)
	}
}

// raiseFDLimit lifts the soft fd limit to the hard one: 10 000 clients need
// 10 000 fds here and 10 000 in the server (which raises its own: Go does at
// start-up).
func raiseFDLimit() {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err == nil && lim.Cur < lim.Max {
		lim.Cur = lim.Max
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
			log.Printf("raising the fd limit: %v", err)
		}
	}
}

// buildServers builds each server's binary once, into a temporary folder.
func buildServers(spec string) ([]server, error) {
	dir, err := os.MkdirTemp("", "c10k-bin-")
	if err != nil {
		return nil, err
	}
	var list []server
	for _, item := range strings.Split(spec, ",") {
		label, pkg, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("-servers: want label=package, got %q", item)
		}
		bin := filepath.Join(dir, label)
		cmd := exec.Command("go", "build", "-o", bin, pkg)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("building %s: %w", pkg, err)
		}
		list = append(list, server{label: label, pkg: pkg, bin: bin})
	}
	return list, nil
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 2 {
			return nil, fmt.Errorf("client count %q: want a number ≥ 2", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// runOne measures one server with n clients.
func runOne(s server, n int, rate float64, size int, idle, active time.Duration) (result, error) {
	r := result{server: s.label, clients: n}
	dir, err := os.MkdirTemp("", "c10k-run-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(dir)
	usersPath := filepath.Join(dir, "users.txt")
	if err := writeUsers(usersPath, n); err != nil {
		return r, err
	}
	addr, err := freeAddr()
	if err != nil {
		return r, err
	}
	cmd := exec.Command(s.bin, "-addr", addr, "-users", usersPath, "-login-timeout", "10m")
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		return r, err
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	if err := waitListening(addr); err != nil {
		return r, err
	}
	pid := cmd.Process.Pid
	base, err := procstat.Read(pid)
	if err != nil {
		return r, err
	}
	r.baseRSS = base.RSSKiB

	lat := newLatencies()
	clients, err := connectAll(addr, n, lat)
	defer func() {
		for _, c := range clients {
			c.conn.Close()
		}
	}()
	r.loggedIn = len(clients)
	if err != nil {
		return r, err
	}

	sampler, err := procstat.NewSampler(pid)
	if err != nil {
		return r, err
	}
	time.Sleep(idle) // a measurement window
	sample, err := sampler.Sample()
	if err != nil {
		return r, err
	}
	r.idleCPU, r.idleRSS, r.idlePSS = sample.CPUPercent, sample.RSSKiB, sample.PSSKiB

	before, _ := procstat.Read(pid)
	start := time.Now()
	r.sent = broadcast(clients, rate, size, active)
	r.expected = r.sent * int64(n-1)
	deadline := time.Now().Add(5 * time.Second)
	for lat.count.Load() < r.expected && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond) // waiting for deliveries in flight, with a limit
	}
	after, _ := procstat.Read(pid)
	r.throughput = float64(lat.count.Load()) / time.Since(start).Seconds()
	r.activeCPU = procstat.CPUPercent(before, after)
	r.delivered = lat.count.Load()
	if r.delivered > 0 {
		cpu := float64(after.CPUTicks-before.CPUTicks) / procstat.ClockTicks
		r.cpuPerMsg = cpu / float64(r.delivered) * 1e6
	}
	r.p50, r.p95, r.p99 = lat.quantiles()
	return r, nil
}

func writeUsers(path string, n int) error {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%s pw 127.0.0.1 %d\n", name(i), 1+i%60000)
	}
	return os.WriteFile(path, []byte(b.String()), 0o600)
}

func name(i int) string { return fmt.Sprintf("u%05d", i) }

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func waitListening(addr string) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("the server did not listen on %s within 10s", addr)
}

// latencies collects delivery times from every receiver.
type latencies struct {
	mu    sync.Mutex
	h     *hdrhistogram.Histogram // microseconds
	count atomic.Int64
}

func newLatencies() *latencies {
	return &latencies{h: hdrhistogram.New(1, 60_000_000, 3)}
}

func (l *latencies) record(d time.Duration) {
	l.mu.Lock()
	l.h.RecordValue(max(1, d.Microseconds()))
	l.mu.Unlock()
	l.count.Add(1)
}

func (l *latencies) quantiles() (p50, p95, p99 float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ms := func(q float64) float64 { return float64(l.h.ValueAtQuantile(q)) / 1000 }
	return ms(50), ms(95), ms(99)
}

// client is one logged-in connection; a goroutine reads what it receives.
type client struct {
	name string
	conn net.Conn
	mu   sync.Mutex // one write at a time
}

// connectAll logs n clients in, 100 at a time.
func connectAll(addr string, n int, lat *latencies) ([]*client, error) {
	clients := make([]*client, n)
	errs := make(chan error, n)
	sem := make(chan struct{}, 100)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := login(addr, name(i))
			if err != nil {
				errs <- err
				return
			}
			clients[i] = c
			go receive(c, lat)
		}()
	}
	wg.Wait()
	close(errs)
	var ok []*client
	for _, c := range clients {
		if c != nil {
			ok = append(ok, c)
		}
	}
	if err := <-errs; err != nil {
		return ok, fmt.Errorf("%d of %d clients could not log in; first error: %w", n-len(ok), n, err)
	}
	return ok, nil
}

func login(addr, user string) (*client, error) {
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	if err := wire.WriteFrame(conn, wire.Frame{Type: wire.Login, Sender: user, Payload: []byte("pw")}); err != nil {
		conn.Close()
		return nil, err
	}
	f, err := wire.ReadFrame(conn)
	if err != nil || string(f.Payload) != "OK" {
		conn.Close()
		return nil, fmt.Errorf("login %s: %v %v", user, f, err)
	}
	conn.SetDeadline(time.Time{})
	return &client{name: user, conn: conn}, nil
}

// receive times every broadcast c receives: its payload starts with the send
// time (the sender is in this process, on the same clock).
func receive(c *client, lat *latencies) {
	for {
		f, err := wire.ReadFrame(c.conn)
		if err != nil {
			return
		}
		if f.Type == wire.Broadcast && len(f.Payload) >= 8 {
			sent := int64(binary.LittleEndian.Uint64(f.Payload))
			lat.record(time.Duration(time.Now().UnixNano() - sent))
		}
	}
}

// broadcast makes the clients take turns broadcasting, rate a second, for d.
// It returns how many broadcasts were sent.
func broadcast(clients []*client, rate float64, size int, d time.Duration) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
	payload := make([]byte, max(size, 8))
	var sent int64
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return sent
		case <-tick.C:
		}
		c := clients[i%len(clients)]
		binary.LittleEndian.PutUint64(payload, uint64(time.Now().UnixNano()))
		b, _ := wire.Encode(wire.Frame{Type: wire.Broadcast, Sender: c.name, Payload: payload})
		c.mu.Lock()
		_, err := c.conn.Write(b)
		c.mu.Unlock()
		if err == nil {
			sent++
		} else if !errors.Is(err, net.ErrClosed) {
			log.Printf("broadcast from %s: %v", c.name, err)
		}
	}
}

// writeAll writes results.csv, results.md and the plots.
func writeAll(dir string, results []result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "results.csv"))
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write([]string{"server", "clients", "logged_in", "base_rss_kib", "idle_rss_kib", "idle_pss_kib",
		"rss_per_conn_kib", "idle_cpu_pct", "active_cpu_pct", "sent", "delivered", "expected",
		"p50_ms", "p95_ms", "p99_ms", "cpu_us_per_delivery", "deliveries_per_s"})
	for _, r := range results {
		w.Write([]string{r.server, strconv.Itoa(r.clients), strconv.Itoa(r.loggedIn),
			i64(r.baseRSS), i64(r.idleRSS), i64(r.idlePSS), f2(r.rssPerConn()), f2(r.idleCPU), f2(r.activeCPU),
			i64(r.sent), i64(r.delivered), i64(r.expected), f2(r.p50), f2(r.p95), f2(r.p99), f2(r.cpuPerMsg), f2(r.throughput)})
	}
	w.Flush()
	if err := errors.Join(w.Error(), f.Close()); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.md"), []byte(table(results)), 0o644); err != nil {
		return err
	}
	return plotAll(dir, results)
}

func i64(v int64) string   { return strconv.FormatInt(v, 10) }
func f2(v float64) string  { return strconv.FormatFloat(v, 'f', 2, 64) }
func kib(v int64) string   { return fmt.Sprintf("%.1f MiB", float64(v)/1024) }
func pct(v float64) string { return fmt.Sprintf("%.1f%%", v) }

// table renders the results as a Markdown table.
func table(results []result) string {
	var b strings.Builder
	b.WriteString("| server | clients | RSS idle | PSS idle | RSS/conn | CPU idle | CPU active | delivered | deliveries/s | p50 ms | p95 ms | p99 ms | CPU µs/delivery |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %.2f KiB | %s | %s | %d/%d | %.0f | %.2f | %.2f | %.2f | %.2f |\n",
			r.server, r.clients, kib(r.idleRSS), kib(r.idlePSS), r.rssPerConn(), pct(r.idleCPU), pct(r.activeCPU),
			r.delivered, r.expected, r.throughput, r.p50, r.p95, r.p99, r.cpuPerMsg)
	}
	return b.String()
}
