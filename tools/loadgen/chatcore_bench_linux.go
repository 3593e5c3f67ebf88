package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"serverlab/tools/monitor/procstat"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The chatcore-bench mode is the chapter 07 experiment in one command: it
// starts the server binary it is given on a fresh database, runs the
// original's method at each client count (as `loadgen chatcore -steps`), and
// measures what a table of latencies alone cannot tell: how much CPU the
// server and the load tester each took per step, from /proc and getrusage,
// and how busy the machine was. It writes results.csv and results.md to
// -out, and repeats the whole ladder -runs times, each on a new server and
// database, so that one noisy run does not decide the verdict.
//
//	go build -o /tmp/chatcore-server ./solutions/07/cmd/chatcore-server
//	go build -o /tmp/loadgen ./tools/loadgen
//	/tmp/loadgen chatcore-bench -server /tmp/chatcore-server -out docs/chatcore-bench
//
// (make bench-chatcore does exactly this.)
func init() {
	register(mode{
		name:    "chatcore-bench",
		summary: "chapter 07's experiment: start a chatcore server binary, run the chatcore table, record server and tester CPU, write CSV + Markdown",
		run:     runChatcoreBench,
	})
}

// benchRow is one step of one run.
type benchRow struct {
	run int
	chatcoreResult
	err                error
	serverCPU, testCPU time.Duration
	wall               time.Duration
	load               string // /proc/loadavg's first three fields at the start
}

func runChatcoreBench(ctx context.Context, env *env, args []string) error {
	fs := newFlagSet(env, "chatcore-bench")
	bin := fs.String("server", "", "the chatcore server `binary` to start (required), e.g. one built from ./solutions/07/cmd/chatcore-server")
	serverArgs := fs.String("server-args", "", "extra flags for the server, space-separated, e.g. \"-hash-memory 4096 -hash-time 1\"")
	steps := fs.String("steps", "5,25,100,200,350,450", "client counts, one step each")
	runs := fs.Int("runs", 1, "how many times to run the whole ladder, each on a fresh server and database")
	out := fs.String("out", "docs/chatcore-bench", "`folder` for results.csv and results.md")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *bin == "" {
		return usageError{errors.New("-server is required")}
	}
	var counts []int
	for _, f := range strings.Split(*steps, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return usageError{fmt.Errorf("-steps: %q is not a positive number", f)}
		}
		counts = append(counts, n)
	}
	say := func(format string, a ...any) { fmt.Fprintf(env.stderr, "chatcore-bench: "+format+"\n", a...) }
	var rows []benchRow
	for run := 1; run <= *runs; run++ {
		r, err := benchRun(ctx, run, *bin, strings.Fields(*serverArgs), counts, say)
		rows = append(rows, r...)
		if err != nil {
			return err
		}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	cmd := "loadgen chatcore-bench " + strings.Join(shownArgs(args, *bin), " ")
	if err := writeBenchCSV(filepath.Join(*out, "results.csv"), rows); err != nil {
		return err
	}
	md := benchMarkdown(cmd, rows, counts)
	if err := os.WriteFile(filepath.Join(*out, "results.md"), []byte(md), 0o644); err != nil {
		return err
	}
	fmt.Fprint(env.stdout, md)
	return nil
}

// shownArgs is args as results.md shows them: the server binary by its base
// name (make bench-chatcore builds it in a temporary folder).
func shownArgs(args []string, bin string) []string {
	shown := slices.Clone(args)
	for i, a := range shown {
		if a == bin {
			shown[i] = filepath.Base(bin)
		}
		if v, ok := strings.CutPrefix(a, "-server="); ok && v == bin {
			shown[i] = "-server=" + filepath.Base(bin)
		}
	}
	return shown
}

// benchRun starts one server on a fresh database and runs every step on it.
// A step that fails (logins that time out) is recorded, and the run goes on.
func benchRun(ctx context.Context, run int, bin string, extra []string, counts []int, say func(string, ...any)) ([]benchRow, error) {
	dir, err := os.MkdirTemp("", "chatcore-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	host, port, _ := net.SplitHostPort(addr)
	srv := exec.Command(bin, append([]string{"--ip", host, "--port", port, "--db", filepath.Join(dir, "bench.db"), "--log", "warn"}, extra...)...)
	srv.Stderr = os.Stderr
	if err := srv.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	defer func() {
		srv.Process.Signal(syscall.SIGTERM)
		srv.Wait()
	}()
	if err := waitListening(ctx, addr, 10*time.Second); err != nil {
		return nil, err
	}
	say("run %d: server %s (pid %d) on %s", run, bin, srv.Process.Pid, addr)
	var rows []benchRow
	for _, n := range counts {
		cfg := chatcoreConfig{addr: addr, clients: n, duration: 10 * time.Second, interval: time.Second, timeout: 10 * time.Second, progress: os.Stderr}
		row := benchRow{run: run, load: loadAvg()}
		s0, t0, w0 := procCPU(srv.Process.Pid), selfCPU(), time.Now()
		res, err := runChatcoreOnce(ctx, cfg)
		row.serverCPU, row.testCPU, row.wall = procCPU(srv.Process.Pid)-s0, selfCPU()-t0, time.Since(w0)
		row.chatcoreResult, row.err = res, err
		row.clients = n
		if err != nil {
			say("run %d, %d clients: %v", run, n, err)
		} else {
			say("run %d, %d clients: sent %d, failed %d, p50 %v, p99 %v, server CPU %v, tester CPU %v",
				run, n, res.sent, res.sent-res.completed, res.p50, res.p99, row.serverCPU, row.testCPU)
		}
		rows = append(rows, row)
		if ctx.Err() != nil {
			return rows, ctx.Err()
		}
	}
	return rows, nil
}

// freeAddr finds a loopback port nobody listens on.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// waitListening dials addr until it answers, at most timeout.
func waitListening(ctx context.Context, addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			return c.Close()
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("the server does not listen on %s: %w", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// procCPU is the user+system CPU time of process pid so far (0 if it cannot
// be read), through tools/monitor's procstat.
func procCPU(pid int) time.Duration {
	snap, err := procstat.Read(pid)
	if err != nil {
		return 0
	}
	return time.Duration(snap.CPUTicks) * time.Second / procstat.ClockTicks
}

// selfCPU is this process's user+system CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func writeBenchCSV(path string, rows []benchRow) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write([]string{"run", "clients", "sent", "failed", "p50_us", "p95_us", "p99_us", "max_us",
		"server_cpu_s", "tester_cpu_s", "wall_s", "loadavg", "error"})
	for _, r := range rows {
		rec := []string{strconv.Itoa(r.run), strconv.Itoa(r.clients)}
		if r.err != nil {
			rec = append(rec, "", "", "", "", "", "")
		} else {
			rec = append(rec, strconv.FormatInt(r.sent, 10), strconv.FormatInt(r.sent-r.completed, 10),
				us(r.p50), us(r.p95), us(r.p99), us(r.pmax))
		}
		errText := ""
		if r.err != nil {
			errText = strings.SplitN(r.err.Error(), "\n", 2)[0]
		}
		rec = append(rec, secs(r.serverCPU), secs(r.testCPU), secs(r.wall), r.load, errText)
		w.Write(rec)
	}
	w.Flush()
	return errors.Join(w.Error(), f.Close())
}

func us(d time.Duration) string   { return strconv.FormatInt(d.Microseconds(), 10) }
func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) }

// benchMarkdown is results.md: every row, then the verdicts the issue asks
// for, from the median p99 over the runs.
func benchMarkdown(cmd string, rows []benchRow, counts []int) string {
	var b strings.Builder
	host, _ := os.Hostname()
	fmt.Fprintf(&b, "# chatcore: the original's load test against chapter 07's server\n\n")
	fmt.Fprintf(&b, "Made by `make bench-chatcore` (`%s`) on %s, %d CPUs, %s.\n", cmd, host, runtime.NumCPU(), time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(&b, "Server and load tester on the same machine, loopback, nothing pinned. CPU = user+system seconds\n")
	fmt.Fprintf(&b, "during the step (the server's from /proc, the tester's from getrusage); load = /proc/loadavg at its start.\n\n")
	b.WriteString("| Run | Clients | Sent | Failed | p50 (µs) | p95 (µs) | p99 (µs) | max (µs) | server CPU (s) | tester CPU (s) | load |\n")
	b.WriteString("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
	for _, r := range rows {
		if r.err != nil {
			fmt.Fprintf(&b, "| %d | %d | — | — | — | — | — | — | %s | %s | %s |\n", r.run, r.clients, secs(r.serverCPU), secs(r.testCPU), r.load)
			continue
		}
		fmt.Fprintf(&b, "| %d | %d | %d | %d | %s | %s | %s | %s | %s | %s | %s |\n", r.run, r.clients, r.sent, r.sent-r.completed,
			us(r.p50), us(r.p95), us(r.p99), us(r.pmax), secs(r.serverCPU), secs(r.testCPU), r.load)
	}
	for _, r := range rows {
		if r.err != nil {
			fmt.Fprintf(&b, "\nRun %d, %d clients did not run: %s\n", r.run, r.clients, strings.SplitN(r.err.Error(), "\n", 2)[0])
		}
	}
	// The verdicts, per client count: every run had 0 failed, and the
	// median p99 over the runs.
	largest := 0
	var at450 string
	for _, n := range counts {
		var p99s []time.Duration
		ok := true
		for _, r := range rows {
			if r.clients != n {
				continue
			}
			if r.err != nil || r.sent != r.completed {
				ok = false
			}
			if r.err == nil {
				p99s = append(p99s, r.p99)
			}
		}
		if len(p99s) == 0 {
			if n == 450 {
				at450 = "no run got past its logins: p99 ≤ 5 ms **not met**"
			}
			continue
		}
		slices.Sort(p99s)
		med := p99s[len(p99s)/2]
		if ok && med < 50*time.Millisecond {
			largest = max(largest, n)
		}
		if n == 450 {
			at450 = fmt.Sprintf("0 failed in every run: %v; median p99 %d µs: p99 ≤ 5 ms %s", ok, med.Microseconds(),
				map[bool]string{true: "**met**", false: "**not met**"}[ok && med <= 5*time.Millisecond])
		}
	}
	fmt.Fprintf(&b, "\nLargest client count with 0 failed (every run) and median p99 < 50 ms: **%d**.\n", largest)
	if at450 != "" {
		fmt.Fprintf(&b, "At 450 clients: %s.\n", at450)
	}
	return b.String()
}
