package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"serverlab/tools/internal/procs"
	"serverlab/tools/internal/procstat"
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
		if err := procs.Build(ctx, "", s.Pkg, bin, log); err != nil {
			return nil, fmt.Errorf("building %s (%s): %w", s.Name, s.Pkg, err)
		}
		out[i].Pkg, out[i].Bin = "", bin
	}
	return out, nil
}

// trialAddr is where the server of a trial listens: its fixed Addr, which
// must be free (else the readiness check would find someone else's server),
// or a free port chosen now.
func trialAddr(s Server) (string, error) {
	addr, err := procs.FreeAddr(s.Addr)
	if err != nil {
		return "", fmt.Errorf("%s's address %s is not free: %w", s.Name, s.Addr, err)
	}
	return addr, nil
}

// expand replaces the placeholders of Server.Args and Server.Env.
func expand(arg string, t *Trial) string {
	return procs.Placeholders(t.Addr,
		"{dir}", t.Dir, "{clients}", strconv.Itoa(t.Clients), "{knob}", t.Knob,
	).Replace(arg)
}

// process is a running server and the end of its standard error.
type process struct {
	*procs.Process
	stderr *tailBuffer
}

const (
	// readyTimeout bounds how long a server may take to accept its first
	// connection.
	readyTimeout = 15 * time.Second
	// stopGrace is how long a server may take to exit on SIGTERM.
	stopGrace = 5 * time.Second
)

// start runs s for trial t and waits until its port accepts a connection.
// Its standard output goes nowhere (the originals print every message, and a
// pipe nobody reads would block them); the end of its standard error is kept
// for the error message if it dies. It runs in the runner's process group,
// so that ^C at the terminal ends it too.
func start(ctx context.Context, s Server, t *Trial) (*process, error) {
	args := make([]string, len(s.Args))
	for i, a := range s.Args {
		args[i] = expand(a, t)
	}
	var env []string
	for _, kv := range s.Env {
		env = append(env, expand(kv, t))
	}
	stderr := &tailBuffer{max: 2048}
	pp, err := procs.Start(procs.Spec{Path: s.Bin, Args: args, Dir: t.Dir, Env: env, Stderr: stderr})
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", s.Name, err)
	}
	p := &process{Process: pp, stderr: stderr}
	if err := p.WaitDialable(ctx, t.Addr, readyTimeout); err != nil {
		p.stop()
		if errors.Is(err, procs.ErrExited) {
			err = fmt.Errorf("%w: %s", err, p.exitStatus())
		}
		return nil, fmt.Errorf("%s: %w", s.Name, err)
	}
	return p, nil
}

// exitStatus says how the process ended, with the end of its stderr.
func (p *process) exitStatus() string {
	if p.Alive() {
		return "running"
	}
	status := "exited 0"
	if err := p.Err(); err != nil {
		status = err.Error()
	}
	if tail := strings.TrimSpace(p.stderr.String()); tail != "" {
		status += "; stderr: " + tail
	}
	return status
}

// stop asks the server to stop (SIGTERM, as an operator would) and kills it
// if it has not exited after stopGrace.
func (p *process) stop() { p.Stop(stopGrace) }

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
