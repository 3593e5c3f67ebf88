package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"serverlab/tools/internal/load"
	"serverlab/tools/internal/runner"
)

// The web experiment is chapter 06's, in two parts (make bench-ch06):
//
//   - static: one request per connection ("Connection: close", as wrk -H
//     and httperf send it), 50 clients, files of 1 KiB and 100 KiB, against
//     the chapter's server, tools/cmd/bench/webceiling (package net doing nothing
//     but answer: the ceiling of the chapter's design), the ceiling plus the
//     file system (webceiling -file: open, fstat, read or sendfile, close per
//     request and nothing else), nginx if it is installed, and the OSTEP
//     original with -peers. Throughput, server CPU per request (all of the
//     server's processes: nginx has workers) and client CPU per request.
//   - sff: FIFO against SFF with one worker: a CGI request (spin.cgi?1, the
//     OSTEP original's with -peers, else the course's) holds the worker for a
//     second while files of mixed sizes arrive one after another; the
//     completion order shows what each policy promises (SFF: by size; FIFO:
//     by arrival).
//
// Results, tables and plots go to docs/bench-ch06.
func init() {
	register(experiment{
		name:    "web",
		summary: "chapter 06: static files vs the package-net ceiling, nginx and the OSTEP original; FIFO vs SFF completion order",
		run:     runWeb,
	})
}

// webSettings are the experiment's flags.
type webSettings struct {
	parts    string
	clients  int
	sizes    string
	duration time.Duration
	warmup   time.Duration
	loops    int
}

func runWeb(ctx context.Context, args []string) error {
	f := newFlags("web", "docs/bench-ch06", 3)
	var s webSettings
	f.StringVar(&s.parts, "parts", "static,sff", "`parts` to run: static, sff or both")
	f.IntVar(&s.clients, "clients", 50, "static: connections at once (wrk -c)")
	f.StringVar(&s.sizes, "sizes", "1024,102400", "static: file `sizes` in bytes, comma-separated")
	f.DurationVar(&s.duration, "duration", 3*time.Second, "static: measured time per trial")
	f.DurationVar(&s.warmup, "warmup", 500*time.Millisecond, "static: unmeasured load before each trial's measurement")
	f.IntVar(&s.loops, "loops", 2, "static: the load generator's event loops (wrk -t)")
	if err := f.parse(args); err != nil {
		return err
	}
	if !strings.Contains(s.parts, "static") && !strings.Contains(s.parts, "sff") {
		return f.fail(fmt.Errorf("-parts %q: want static, sff or both", s.parts))
	}
	sizes, err := parseSizes(s.sizes)
	if err != nil {
		return f.fail(err)
	}
	var results []*runner.Results
	var static *runner.Results
	if strings.Contains(s.parts, "static") {
		res, err := runStatic(ctx, f, s, sizes)
		if err != nil {
			return err
		}
		static = res
		results = append(results, res)
	}
	var order []sffRequest
	if strings.Contains(s.parts, "sff") {
		res, reqs, err := runSFF(ctx, f)
		if err != nil {
			return err
		}
		order = reqs
		results = append(results, res)
	}
	if err := runner.WriteFiles(f.out, results...); err != nil {
		return err
	}
	if static != nil {
		if err := writeStaticRatios(filepath.Join(f.out, "ratios.md"), static); err != nil {
			return err
		}
	}
	if order != nil {
		if err := writeSFFFiles(f.out, order); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "web: wrote %s\n", f.out)
	return nil
}

// runStatic measures static files served one request per connection.
func runStatic(ctx context.Context, f *flags, s webSettings, sizes []int) (*runner.Results, error) {
	var knobs []string
	for _, n := range sizes {
		knobs = append(knobs, strconv.Itoa(n))
	}
	servers := []runner.Server{
		{Name: "ch06", Pkg: "./solutions/06/cmd/wserver",
			Args: []string{"-addr", "127.0.0.1", "-p", "{port}", "-d", "{dir}/www", "-t", "8", "-b", "64"}},
		{Name: "ch06-sff", Pkg: "./solutions/06/cmd/wserver",
			Args: []string{"-addr", "127.0.0.1", "-p", "{port}", "-d", "{dir}/www", "-t", "8", "-b", "64", "-s", "SFF"}},
		{Name: "ceiling", Pkg: "./tools/cmd/bench/webceiling",
			Args: []string{"-mode", "net", "-addr", "{addr}", "-size", "{knob}"}},
		{Name: "ceiling+file", Pkg: "./tools/cmd/bench/webceiling",
			Args: []string{"-mode", "net", "-addr", "{addr}", "-file", "{dir}/www/f{knob}.html"}},
	}
	nginx, _ := exec.LookPath("nginx")
	if nginx != "" {
		servers = append(servers, runner.Server{Name: "nginx", Bin: nginx,
			Args: []string{"-p", "{dir}", "-c", "{dir}/nginx.conf", "-e", "{dir}/error.log"}})
	} else {
		fmt.Fprintln(os.Stderr, "bench web: leaving out nginx: not installed (apt-get install -y nginx)")
	}
	if bin := f.peer("ostep/concurrency-webserver/src/wserver"); bin != "" {
		// The original dies of the first client that closes early (SIGPIPE,
		// then an assert in write_or_die, request.c): the runner's readiness
		// probe is such a client. Started with SIGPIPE ignored it still
		// asserts; its trials fail, and the failure is the measurement.
		servers = append(servers, runner.Server{Name: "ostep", Bin: bin, Args: []string{"-d", "{dir}/www", "-p", "{port}"}})
	}
	// The load generator runs in this process: one P more than it has event
	// loops, as loadgen http does (see tools/cmd/loadgen/http.go).
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(s.loops + 1))
	e := runner.Experiment{
		Name: "web-static", Command: f.command(), Servers: servers, Baseline: "ceiling",
		Clients: []int{s.clients}, KnobName: "bytes", Knobs: knobs, Rounds: f.rounds,
		Setup: staticSetup(sizes),
		Trial: func(ctx context.Context, t *runner.Trial) (runner.Outcome, error) {
			return staticTrial(ctx, t, s)
		},
		Table: []runner.Column{
			{Key: "throughput_rps", Title: "req/s", Ratio: true},
			{Key: "server_us_per_req", Title: "server CPU µs/req", Ratio: true},
			{Key: "client_us_per_req", Title: "client CPU µs/req"},
			{Key: "p99_ms", Title: "p99 ms"},
			{Key: "failures", Title: "failed"},
		},
		Plots: []runner.Plot{
			{File: "static_throughput.png", Title: "Static files, one request per connection, 50 clients",
				Y: "requests/s", Keys: []string{"throughput_rps"}, X: "knob", LogX: true},
			{File: "static_cpu.png", Title: "Server CPU per request (all its processes)",
				Y: "CPU µs per request", Keys: []string{"server_us_per_req"}, X: "knob", LogX: true},
		},
	}
	return e.Run(ctx)
}

// parseSizes reads -sizes: file sizes in bytes, comma-separated.
func parseSizes(list string) ([]int, error) {
	var sizes []int
	for field := range strings.SplitSeq(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("-sizes: %q is not a size in bytes", field)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}

// staticSetup writes the trial's files: www/f<size>.html of random bytes for
// every size, and nginx's configuration. Everything is world-readable:
// nginx's workers run as nobody.
func staticSetup(sizes []int) func(t *runner.Trial) error {
	return func(t *runner.Trial) error {
		www := filepath.Join(t.Dir, "www")
		if err := os.MkdirAll(filepath.Join(t.Dir, "logs"), 0o755); err != nil {
			return err
		}
		if err := os.Mkdir(www, 0o755); err != nil {
			return err
		}
		for _, n := range sizes {
			b := make([]byte, n)
			rand.Read(b)
			if err := os.WriteFile(filepath.Join(www, fmt.Sprintf("f%d.html", n)), b, 0o644); err != nil {
				return err
			}
		}
		if err := os.Chmod(t.Dir, 0o755); err != nil { // MkdirTemp makes it 0700
			return err
		}
		return os.WriteFile(filepath.Join(t.Dir, "nginx.conf"), []byte(nginxConf(t.Dir, t.Addr)), 0o644)
	}
}

// nginxConf is the configuration nginx is measured with: as many workers as
// cores, sendfile with tcp_nopush (TCP_CORK), no keep-alive, no access log,
// and "deferred" (TCP_DEFER_ACCEPT), as chapter 06's listener.
func nginxConf(dir, addr string) string {
	return fmt.Sprintf(`daemon off;
worker_processes auto;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 4096; }
http {
    access_log off; sendfile on; tcp_nopush on; keepalive_timeout 0;
    client_body_temp_path %[1]s/b; proxy_temp_path %[1]s/p; fastcgi_temp_path %[1]s/f;
    uwsgi_temp_path %[1]s/u; scgi_temp_path %[1]s/s;
    server { listen %[2]s deferred; root %[1]s/www; }
}
`, dir, addr)
}

// staticTrial loads the server with one-shot requests for the knob's file:
// a warm-up, then the measured run, reading the CPU of the server (all its
// processes) and of this process around the measured run only.
func staticTrial(ctx context.Context, t *runner.Trial, s webSettings) (runner.Outcome, error) {
	size, _ := strconv.Atoi(t.Knob)
	req := fmt.Appendf(nil, "GET /f%d.html HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", size, t.Addr)
	shot := load.OneShot{Addr: t.Addr, Request: req, Clients: t.Clients, Loops: s.loops,
		HeadSize: 512, Check: replyOf(size)}
	if s.warmup > 0 {
		shot.Duration = s.warmup
		if _, err := shot.Run(ctx); err != nil {
			return runner.Outcome{}, fmt.Errorf("warm-up: %w", err)
		}
	}
	shot.Duration = s.duration
	srv0, err := treeCPU(t.PID)
	if err != nil {
		return runner.Outcome{}, err
	}
	cli0 := selfCPU()
	res, err := shot.Run(ctx)
	cli1 := selfCPU()
	srv1, serr := treeCPU(t.PID)
	if err = errors.Join(err, serr); err != nil {
		return runner.Outcome{}, err
	}
	v := runner.LoadValues(res)
	if res.Successes > 0 {
		n := float64(res.Successes)
		v["server_us_per_req"] = (srv1 - srv0).Seconds() * 1e6 / n
		v["client_us_per_req"] = (cli1 - cli0).Seconds() * 1e6 / n
	}
	t.Logf("%s %s bytes: %.0f req/s, server %.1f µs/req, %d failed", t.Server, t.Knob,
		res.Throughput, v["server_us_per_req"], res.Failures)
	if res.Successes == 0 {
		return runner.Outcome{Values: v}, fmt.Errorf("no request succeeded (%d failed)", res.Failures)
	}
	return runner.Outcome{Values: v, Latency: res.Latency}, nil
}

// replyOf checks a reply: status 200 and a body of exactly size bytes after
// the header (each server's header differs; the body does not).
func replyOf(size int) func(head []byte, total int) error {
	return func(head []byte, total int) error {
		line, _, _ := bytes.Cut(head, []byte("\r\n"))
		if !bytes.HasPrefix(line, []byte("HTTP/1.")) || !bytes.Contains(line, []byte(" 200 ")) {
			return load.WithKind("status", fmt.Errorf("%w: status line %q", load.ErrBadReply, line))
		}
		end := bytes.Index(head, []byte("\r\n\r\n"))
		if end < 0 || total-end-4 != size {
			return load.WithKind("short body", fmt.Errorf("%w: %d bytes in all, want a %d-byte body", load.ErrBadReply, total, size))
		}
		return nil
	}
}

// treeCPU is the CPU time used so far by process pid and its children (nginx
// serves from worker processes; the runner's own cpu_s counts the master
// only), from /proc/<pid>/stat: utime + stime, in clock ticks.
func treeCPU(pid int) (time.Duration, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	var ticks uint64
	found := false
	for _, e := range entries {
		id, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, t, err := procTicks(id)
		if err != nil || (id != pid && ppid != pid) {
			continue
		}
		found = found || id == pid
		ticks += t
	}
	if !found {
		return 0, fmt.Errorf("server process %d is gone", pid)
	}
	const hz = 100 // USER_HZ on Linux
	return time.Duration(ticks) * time.Second / hz, nil
}

// procTicks reads a process's parent and its utime + stime from
// /proc/<pid>/stat (fields 4, 14 and 15, counted after the command name,
// which may contain spaces and parentheses).
func procTicks(pid int) (ppid int, ticks uint64, err error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, err
	}
	end := bytes.LastIndexByte(data, ')')
	fields := bytes.Fields(data[end+1:])
	if end < 0 || len(fields) < 13 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	ppid, err = strconv.Atoi(string(fields[4-3]))
	if err != nil {
		return 0, 0, err
	}
	utime, err1 := strconv.ParseUint(string(fields[14-3]), 10, 64)
	stime, err2 := strconv.ParseUint(string(fields[15-3]), 10, 64)
	return ppid, utime + stime, errors.Join(err1, err2)
}

// writeStaticRatios writes the goal's numbers: per size, the throughput of
// chapter 06's server (FIFO and SFF) over each other server's in the same
// round (they ran one after the other), round by round, and the median.
func writeStaticRatios(path string, r *runner.Results) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## web-static: ratios per round\n\n`%s`\n\n", r.Command)
	fmt.Fprintf(&b, "Throughput of the chapter's server divided by another server's in the same round; the median of the rounds last.\n\n")
	fmt.Fprintf(&b, "| bytes | ratio | per round | median |\n|---|---|---|---|\n")
	for _, c := range r.Cells() {
		for _, ours := range []string{"ch06", "ch06-sff"} {
			for _, other := range r.Servers {
				if _, n := r.Median(other, c, "throughput_rps"); other == "ch06" || other == "ch06-sff" || n == 0 {
					continue // ours, or a server without a successful trial (see results.md)
				}
				var ratios []string
				var xs []float64
				for round := 1; round <= maxRound(r); round++ {
					a, okA := rowValue(r, ours, c, round, "throughput_rps")
					o, okO := rowValue(r, other, c, round, "throughput_rps")
					if okA && okO && o > 0 {
						xs = append(xs, a/o)
						ratios = append(ratios, fmt.Sprintf("%.3f", a/o))
					} else {
						ratios = append(ratios, "—")
					}
				}
				fmt.Fprintf(&b, "| %s | %s / %s | %s | **%.3f** |\n", c.Knob, ours, other, strings.Join(ratios, " "), runner.Median(xs))
			}
		}
	}
	fmt.Fprintf(os.Stderr, "\n%s\n", b.String())
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// rowValue is one trial's value, if that trial succeeded.
func rowValue(r *runner.Results, server string, c runner.Cell, round int, key string) (float64, bool) {
	for _, row := range r.Rows {
		if row.Server == server && row.Clients == c.Clients && row.Knob == c.Knob && row.Round == round && row.Err == "" {
			v, ok := row.Values[key]
			return v, ok
		}
	}
	return 0, false
}

// maxRound is the number of rounds r ran.
func maxRound(r *runner.Results) int {
	n := 0
	for _, row := range r.Rows {
		n = max(n, row.Round)
	}
	return n
}
