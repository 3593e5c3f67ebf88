//go:build linux

// Command ch05stock is chapter 05's stock experiment: the chapter's stock
// server on the epoll loop against the original event-driven stock server (a
// select() loop in C), driven by the original's own client,
// multiclient_benchmark, in the same run.
//
//	PEERS=/path/to/originals go run ./tools/bench/ch05stock -out docs/bench-ch05-stock
//
// For every round, stock set-up (shares per stock), client count and server
// in turn (interleaved, so that all see the same noise), it copies a fresh
// stock.txt into a new folder, starts the server there, runs
// `multiclient_benchmark 127.0.0.1 <port> <clients> <queries>`, and takes
// the wall time of that run and the server's CPU time over it (utime+stime
// from /proc/<pid>/stat). It writes results.csv, results.md (medians per
// cell, ratios to the original) and two bar charts (throughput.png,
// cpu_per_query.png) to -out, progress to stderr.
//
// -also label=binary adds more servers that take the course's arguments
// (another build of the chapter, to measure what one change bought).
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"serverlab/tools/monitor/procstat"
)

// original is where the original event-driven server and its benchmark live
// under $PEERS (tools/interop/peers/build.sh builds them there).
const (
	originalServer = "sg-syssw/concurrent_stockserver/event_driven/stockserver"
	originalBench  = "sg-syssw/concurrent_stockserver/client/multiclient_benchmark"
)

// The original's stock file: ids in this order give its tree its shape.
var stockIDs = []int{1, 5, 3, 2, 4, 10, 9, 6, 7, 8}

// server is one server under test.
type server struct {
	label string
	args  func(port string) []string // the command line
}

// sample is one measured run.
type sample struct {
	round, shares, clients int
	server                 string
	seconds                float64
	cpuTicks               uint64
	queries                int
}

func (s sample) qps() float64 { return float64(s.queries) / s.seconds }
func (s sample) cpuPerQuery() float64 {
	return float64(s.cpuTicks) * 1e6 / procstat.ClockTicks / float64(s.queries)
}

func main() {
	peers := flag.String("peers", os.Getenv("PEERS"), "the folder the originals are built in (default $PEERS)")
	clientList := flag.String("clients", "16,64", "client counts")
	shareList := flag.String("shares", "100000,1000000", "shares per stock: one stock set-up each")
	queries := flag.Int("queries", 100000, "queries per run (all clients together)")
	rounds := flag.Int("rounds", 3, "rounds (each runs every cell once, servers interleaved)")
	out := flag.String("out", "docs/bench-ch05-stock", "folder for results.csv, results.md and the plots")
	pkg := flag.String("pkg", "./solutions/05/cmd/stockserver", "the course's stock server package")
	also := flag.String("also", "", "more servers with the course's arguments: label=binary,…")
	flag.Parse()
	if *peers == "" {
		log.Fatal("ch05stock: set PEERS (or -peers) to the folder the originals are built in")
	}
	clients, err := parseInts(*clientList)
	check(err)
	shares, err := parseInts(*shareList)
	check(err)
	tmp, err := os.MkdirTemp("", "ch05stock-")
	check(err)
	defer os.RemoveAll(tmp)

	course := filepath.Join(tmp, "ch05-stockserver")
	log.Printf("building %s", *pkg)
	build := exec.Command("go", "build", "-o", course, *pkg)
	build.Stderr = os.Stderr
	check(build.Run())
	ours := func(bin string) func(string) []string {
		return func(port string) []string { return []string{bin, "-addr", "127.0.0.1", port} }
	}
	orig := filepath.Join(*peers, originalServer)
	servers := []server{
		{"original event", func(port string) []string { return []string{orig, port, "PRODUCTION"} }},
		{"ch05", ours(course)},
	}
	for _, kv := range strings.Split(*also, ",") {
		if label, bin, ok := strings.Cut(kv, "="); ok {
			abs, err := filepath.Abs(bin)
			check(err)
			servers = append(servers, server{label, ours(abs)})
		}
	}
	bench := filepath.Join(*peers, originalBench)

	var samples []sample
	for r := 1; r <= *rounds; r++ {
		for _, sh := range shares {
			for _, n := range clients {
				for _, s := range servers {
					sm, err := runOne(tmp, bench, s, sh, n, *queries)
					if err != nil {
						log.Fatalf("round %d, %s, %d shares, %d clients: %v", r, s.label, sh, n, err)
					}
					sm.round = r
					samples = append(samples, sm)
					log.Printf("round %d/%d  %7d shares  %2d clients  %-16s %8.0f q/s  %5.2f µs CPU/query",
						r, *rounds, sh, n, s.label, sm.qps(), sm.cpuPerQuery())
				}
			}
		}
	}
	check(os.MkdirAll(*out, 0o755))
	check(os.WriteFile(filepath.Join(*out, "results.csv"), []byte(csvOf(samples)), 0o644))
	md := table(samples, servers, shares, clients, *queries, *rounds)
	check(os.WriteFile(filepath.Join(*out, "results.md"), []byte(md), 0o644))
	check(plotAll(*out, samples, servers, shares, clients))
	fmt.Print(md)
}

// runOne runs one server once under multiclient_benchmark.
func runOne(tmp, bench string, s server, shares, clients, queries int) (sample, error) {
	dir, err := os.MkdirTemp(tmp, "run-")
	if err != nil {
		return sample{}, err
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "stock.txt"), stockFile(shares), 0o644); err != nil {
		return sample{}, err
	}
	port, err := freePort()
	if err != nil {
		return sample{}, err
	}
	args := s.args(port)
	srv := exec.Command(args[0], args[1:]...)
	srv.Dir = dir // stdout and stderr: /dev/null (the original prints a line per query)
	if err := srv.Start(); err != nil {
		return sample{}, err
	}
	defer func() {
		srv.Process.Signal(syscall.SIGKILL)
		srv.Wait()
	}()
	if err := waitListening("127.0.0.1:" + port); err != nil {
		return sample{}, err
	}
	before, err := cpuTicks(srv.Process.Pid)
	if err != nil {
		return sample{}, err
	}
	start := time.Now()
	cmd := exec.Command(bench, "127.0.0.1", port, strconv.Itoa(clients), strconv.Itoa(queries))
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return sample{}, fmt.Errorf("multiclient_benchmark: %w", err)
	}
	elapsed := time.Since(start)
	after, err := cpuTicks(srv.Process.Pid)
	if err != nil {
		return sample{}, err
	}
	// The benchmark gives each client queries/clients queries.
	done := queries / clients * clients
	return sample{shares: shares, clients: clients, server: s.label, seconds: elapsed.Seconds(),
		cpuTicks: after - before, queries: done}, nil
}

// stockFile is the original's stock.txt with every count set to shares.
func stockFile(shares int) []byte {
	var b strings.Builder
	for _, id := range stockIDs {
		fmt.Fprintf(&b, "%d %d %d\n", id, shares, 1000*id)
	}
	return []byte(b.String())
}

// cpuTicks is the process's utime+stime.
func cpuTicks(pid int) (uint64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	st, err := procstat.ParseStat(data)
	if err != nil {
		return 0, err
	}
	return st.UTime + st.STime, nil
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	_, port, err := net.SplitHostPort(ln.Addr().String())
	return port, err
}

// waitListening dials addr until it answers (a connection that sends nothing
// and closes: both servers just drop it).
func waitListening(addr string) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("server at %s never listened: %w", addr, err)
		}
		time.Sleep(20 * time.Millisecond) // polling a child process's start-up: nothing to wait on
	}
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("bad number %q", f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("empty list")
	}
	return out, nil
}

func check(err error) {
	if err != nil {
		log.Fatal("ch05stock: ", err)
	}
}
