package runner

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"serverlab/tools/monitor/procstat"
)

// Build compiles every server that has a Pkg into dir (go build -o, once per
// server, before any trial: a trial must never time the compiler) and
// returns the servers with Bin set.
func Build(ctx context.Context, dir string, servers []Server, log io.Writer) ([]Server, error) {
	out := make([]Server, len(servers))
	for i, s := range servers {
		out[i] = s
		if s.Pkg == "" {
			continue
		}
		bin := filepath.Join(dir, s.Name)
		fmt.Fprintf(log, "building %s (%s)\n", s.Name, s.Pkg)
		cmd := exec.CommandContext(ctx, goCommand(), "build", "-o", bin, s.Pkg)
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("building %s (%s): %w", s.Name, s.Pkg, err)
		}
		out[i].Pkg, out[i].Bin = "", bin
	}
	return out, nil
}

// goCommand is the go command: $GO as the Makefile sets it, or go.
func goCommand() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}

// trialAddr is where the server of a trial listens: its fixed Addr, which
// must be free (else the readiness check would find someone else's server),
// or a free port chosen now.
func trialAddr(s Server) (string, error) {
	addr := s.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("%s's address %s is not free: %w", s.Name, addr, err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// expand replaces the placeholders of Server.Args and Server.Env.
func expand(arg string, t *Trial) string {
	_, port, _ := net.SplitHostPort(t.Addr)
	return strings.NewReplacer(
		"{addr}", t.Addr, "{port}", port, "{dir}", t.Dir,
		"{clients}", strconv.Itoa(t.Clients), "{knob}", t.Knob,
	).Replace(arg)
}

// process is a running server.
type process struct {
	cmd    *exec.Cmd
	done   chan struct{} // closed when the process has exited
	err    error         // its exit status, once done
	stderr *tailBuffer
}

// readyTimeout bounds how long a server may take to accept its first
// connection.
const readyTimeout = 15 * time.Second

// start runs s for trial t and waits until its port accepts a connection.
// Its standard output goes nowhere (the originals print every message, and a
// pipe nobody reads would block them); the end of its standard error is kept
// for the error message if it dies.
func start(ctx context.Context, s Server, t *Trial) (*process, error) {
	args := make([]string, len(s.Args))
	for i, a := range s.Args {
		args[i] = expand(a, t)
	}
	cmd := exec.Command(s.Bin, args...)
	cmd.Dir = t.Dir
	cmd.Env = os.Environ()
	for _, kv := range s.Env {
		cmd.Env = append(cmd.Env, expand(kv, t))
	}
	p := &process{cmd: cmd, done: make(chan struct{}), stderr: &tailBuffer{max: 2048}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", s.Name, err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	if err := p.waitReady(ctx, t.Addr); err != nil {
		p.stop()
		return nil, fmt.Errorf("%s: %w", s.Name, err)
	}
	return p, nil
}

// waitReady dials addr until it accepts, the process dies or time runs out.
func (p *process) waitReady(ctx context.Context, addr string) error {
	deadline := time.Now().Add(readyTimeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("exited before listening on %s: %s", addr, p.exitStatus())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond): // poll: there is no event for "now listening"
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening on %s after %v", addr, readyTimeout)
		}
	}
}

func (p *process) pid() int { return p.cmd.Process.Pid }

func (p *process) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// exitStatus says how the process ended, with the end of its stderr.
func (p *process) exitStatus() string {
	if p.alive() {
		return "running"
	}
	status := "exited 0"
	if p.err != nil {
		status = p.err.Error()
	}
	if tail := strings.TrimSpace(p.stderr.String()); tail != "" {
		status += "; stderr: " + tail
	}
	return status
}

// stop asks the server to stop (SIGTERM, as an operator would) and kills it
// if it has not exited after five seconds.
func (p *process) stop() {
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		p.cmd.Process.Kill()
	}
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = b.buf[over:]
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(bytes.ToValidUTF8(b.buf, nil))
}

// monitor samples a server while a trial runs.
type monitor struct {
	first    procstat.Snapshot
	stopping chan struct{}
	finished chan struct{}
	rss, pss int64 // peaks, owned by the sampling goroutine until finished
	pid      int
}

// usage is what the monitor measured over a trial.
type usage struct {
	cpuSeconds float64
	rss, pss   int64 // KiB, peaks; pss -1 if unreadable
}

func startMonitor(pid int, every time.Duration) (*monitor, error) {
	first, err := procstat.Read(pid)
	if err != nil {
		return nil, fmt.Errorf("reading the server's /proc: %w", err)
	}
	m := &monitor{first: first, pid: pid, rss: first.RSSKiB, pss: first.PSSKiB,
		stopping: make(chan struct{}), finished: make(chan struct{})}
	go m.loop(every)
	return m, nil
}

func (m *monitor) loop(every time.Duration) {
	defer close(m.finished)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-m.stopping:
			return
		case <-tick.C:
		}
		m.sample()
	}
}

// sample reads the server's counters and keeps the memory peaks. A failed
// read (the server died) returns the zero Snapshot: the trial's own error
// says what went wrong.
func (m *monitor) sample() procstat.Snapshot {
	s, err := procstat.Read(m.pid)
	if err != nil {
		return procstat.Snapshot{}
	}
	m.rss, m.pss = max(m.rss, s.RSSKiB), max(m.pss, s.PSSKiB)
	return s
}

// stop takes a last sample and returns the trial's usage.
func (m *monitor) stop() usage {
	close(m.stopping)
	<-m.finished
	last := m.sample()
	u := usage{rss: m.rss, pss: m.pss}
	if last.CPUTicks >= m.first.CPUTicks && !last.Time.IsZero() {
		u.cpuSeconds = float64(last.CPUTicks-m.first.CPUTicks) / procstat.ClockTicks
	}
	return u
}

// addTo adds the server's columns to a trial's values.
func (u usage) addTo(v map[string]float64, wall time.Duration) {
	v["wall_s"] = wall.Seconds()
	v["cpu_s"] = u.cpuSeconds
	if wall > 0 {
		v["cpu_pct"] = 100 * u.cpuSeconds / wall.Seconds()
	}
	v["rss_kib"] = float64(u.rss)
	if u.pss >= 0 {
		v["pss_kib"] = float64(u.pss)
	}
	if n := v["successes"]; n > 0 {
		v["cpu_us_per_op"] = u.cpuSeconds * 1e6 / n
	}
}
