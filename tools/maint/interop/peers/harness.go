//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"serverlab/tools/internal/procs"
)

type status string

const (
	pass status = "pass"
	fail status = "FAIL"
	skip status = "skip"
)

// result is one row of the table.
type result struct {
	Case     string `json:"case"`
	Status   status `json:"status"`
	Evidence string `json:"evidence"`
	Output   string `json:"output,omitempty"`
}

// A kase is one interop check. Needs are files under -peers (an original's
// programs), tools are commands that must be on $PATH; either missing skips
// the case. Group "netns" cases use the chat system's fixed ports.
type kase struct {
	name  string
	group string
	needs []string
	tools []string
	run   func(ctx context.Context, h *harness) (evidence string, err error)
}

const (
	groupHost  = "host"
	groupNetns = "netns"
)

// harness runs cases and knows where every program is.
type harness struct {
	o   options
	log io.Writer
	mu  sync.Mutex
	out bytes.Buffer // the current case's output (commands' stdout/stderr)
}

func newHarness(o options, log io.Writer) *harness { return &harness{o: o, log: log} }

// ours is the path of one of the course's programs built into -bin.
func (h *harness) ours(name string) string { return filepath.Join(h.o.bin, name) }

// peer is the path of a file of the originals under -peers.
func (h *harness) peer(rel string) string { return filepath.Join(h.o.peers, rel) }

// allCases is every case, in table order: the interop cases, then the
// byte-level comparisons when -diff is given.
func (h *harness) allCases() []kase {
	cs := interopCases()
	if h.o.diff {
		cs = append(cs, diffCases()...)
	}
	return cs
}

// runAll runs the host cases here and the fixed-port cases in a private
// network namespace, and returns every result in table order.
func (h *harness) runAll(ctx context.Context) []result {
	byName := map[string]result{}
	for _, r := range h.runGroup(ctx, groupHost) {
		byName[r.Case] = r
	}
	for _, r := range h.runNetnsGroup(ctx) {
		byName[r.Case] = r
	}
	var rs []result
	for _, c := range h.allCases() {
		if r, ok := byName[c.name]; ok {
			rs = append(rs, r)
		}
	}
	return rs
}

// runGroup runs one group's cases in this process.
func (h *harness) runGroup(ctx context.Context, group string) []result {
	var rs []result
	for _, c := range h.allCases() {
		if c.group != group || !strings.Contains(c.name, h.o.only) {
			continue
		}
		r := h.runCase(ctx, c)
		fmt.Fprintf(h.log, "%-4s  %s: %s\n", r.Status, r.Case, r.Evidence)
		if h.o.verbose && r.Output != "" {
			fmt.Fprintln(h.log, indent(r.Output))
		}
		rs = append(rs, r)
	}
	return rs
}

// runNetnsGroup starts this program again inside a new network namespace
// (`unshare -n`) to run the fixed-port cases, so that ports 5000 and 6000
// are certainly served by the programs the cases start. If that is not
// permitted, it runs them here after checking that both ports are free.
func (h *harness) runNetnsGroup(ctx context.Context) []result {
	var todo []kase
	for _, c := range h.allCases() {
		if c.group == groupNetns && strings.Contains(c.name, h.o.only) {
			todo = append(todo, c)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	// Cases that will skip need no namespace: decide them here.
	var rs []result
	runnable := false
	for _, c := range todo {
		if why := h.skipReason(c); why != "" {
			rs = append(rs, result{Case: c.name, Status: skip, Evidence: why})
		} else {
			runnable = true
		}
	}
	if !runnable {
		return rs
	}
	if !h.o.noNetns {
		if got, err := h.spawnNetns(ctx); err == nil {
			return got
		} else {
			fmt.Fprintf(h.log, "note  unshare -n failed (%v): running the chat cases on the host network\n", err)
		}
	}
	for _, p := range []string{"5000", "6000"} {
		if err := portFree("127.0.0.1:" + p); err != nil {
			var out []result
			for _, c := range todo {
				out = append(out, result{Case: c.name, Status: fail,
					Evidence: "port " + p + " is taken on the host and no private network namespace is possible: " + err.Error()})
			}
			return out
		}
	}
	return h.runGroup(ctx, groupNetns)
}

func (h *harness) spawnNetns(ctx context.Context) ([]result, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		return nil, err
	}
	args := []string{"-n", "--", self, "-netns-child", groupNetns, "-bin", h.o.bin,
		"-peers", h.o.peers, "-timeout", h.o.timeout.String(), "-run", h.o.only}
	if h.o.diff {
		args = append(args, "-diff")
	}
	if h.o.verbose {
		args = append(args, "-v")
	}
	fmt.Fprintln(h.log, "note  the chat cases use the fixed ports 5000/6000: running them in a private network namespace (unshare -n, ip link set lo up)")
	cmd := exec.CommandContext(ctx, "unshare", args...)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = h.log
	if err := cmd.Run(); err != nil {
		return nil, err
	}
	var rs []result
	if err := json.Unmarshal(stdout.Bytes(), &rs); err != nil {
		return nil, fmt.Errorf("reading the namespace's results: %v", err)
	}
	for i := range rs {
		if rs[i].Status != skip {
			rs[i].Evidence += " [private netns]"
		}
	}
	return rs, nil
}

// skipReason says why a case cannot run here, or "" if it can.
func (h *harness) skipReason(c kase) string {
	for _, t := range c.tools {
		if _, err := exec.LookPath(t); err != nil {
			return t + " is not installed (Debian: apt-get install -y " + debianPackage(t) + ")"
		}
	}
	if len(c.needs) > 0 && h.o.peers == "" {
		return "needs the original (" + strings.SplitN(c.needs[0], "/", 2)[0] + "): no -peers folder given (docs/interop.md)"
	}
	for _, n := range c.needs {
		if _, err := os.Stat(h.peer(n)); err != nil {
			return "original not built: " + n + " missing under -peers (docs/interop.md lists where each program goes)"
		}
	}
	return ""
}

// debianPackage names the package that provides a command.
func debianPackage(tool string) string {
	if tool == "unshare" {
		return "util-linux"
	}
	return tool // curl, wrk, httperf, python3
}

func (h *harness) runCase(ctx context.Context, c kase) result {
	if why := h.skipReason(c); why != "" {
		return result{Case: c.name, Status: skip, Evidence: why}
	}
	h.mu.Lock()
	h.out.Reset()
	h.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, h.o.timeout)
	defer cancel()
	ev, err := c.run(ctx, h)
	h.mu.Lock()
	output := h.out.String()
	h.mu.Unlock()
	r := result{Case: c.name, Status: pass, Evidence: ev, Output: output}
	var skipped errSkip
	if errors.As(err, &skipped) {
		return result{Case: c.name, Status: skip, Evidence: skipped.Error()}
	}
	if err != nil {
		r.Status = fail
		r.Evidence = err.Error()
		if ctx.Err() != nil {
			r.Evidence += fmt.Sprintf(" (case time limit %v reached)", h.o.timeout)
		}
	}
	r.Evidence = oneLine(r.Evidence)
	return r
}

// record keeps a command's output for -v and for failure messages.
func (h *harness) record(label string, b []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fmt.Fprintf(&h.out, "--- %s\n%s\n", label, bytes.TrimRight(b, "\n"))
}

// proc is a server started by a case, with everything it printed.
type proc struct {
	*procs.Process
	out *lockedBuffer
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() < 1<<20 {
		l.b.Write(p)
	}
	return len(p), nil
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

const (
	// readyTimeout bounds how long a server may take to listen.
	readyTimeout = 10 * time.Second
	// stopGrace is how long a server's group may take to exit on SIGTERM.
	stopGrace = 2 * time.Second
)

// start runs a server in dir and waits until it listens on addr itself
// (procs.WaitListening: a dial would kill the OSTEP server, and on the fixed
// ports it could be someone else's). The server runs in its own process
// group, so stop also ends its children (CGI programs, forked workers).
func (h *harness) start(ctx context.Context, dir, addr string, argv ...string) (*proc, error) {
	out := &lockedBuffer{}
	pp, err := procs.Start(procs.Spec{Path: argv[0], Args: argv[1:], Dir: dir, Stdout: out, Stderr: out, Group: true})
	if err != nil {
		return nil, err
	}
	p := &proc{Process: pp, out: out}
	if err := p.WaitListening(ctx, addr, readyTimeout); err != nil {
		p.stop()
		if errors.Is(err, procs.ErrExited) {
			err = fmt.Errorf("%w: %s", err, p.exitStatus())
		}
		return nil, fmt.Errorf("%s: %v; its output: %q", p.Name(), err, tail(out.String(), 300))
	}
	return p, nil
}

// startOnFreePort starts a server in dir on a free port of 127.0.0.1, with
// {port} and {addr} in argv replaced by that port and address, and returns it
// and its port.
func (h *harness) startOnFreePort(ctx context.Context, dir string, argv ...string) (*proc, string, error) {
	addr, err := procs.FreeAddr("")
	if err != nil {
		return nil, "", err
	}
	ph := procs.Placeholders(addr)
	args := make([]string, len(argv))
	for i, a := range argv {
		args[i] = ph.Replace(a)
	}
	_, port, _ := net.SplitHostPort(addr)
	p, err := h.start(ctx, dir, addr, args...)
	return p, port, err
}

// exitStatus describes how the server ended (for evidence lines).
func (p *proc) exitStatus() string {
	if p.Alive() {
		return "running"
	}
	if err := p.Err(); err != nil {
		return err.Error()
	}
	return "exited with status 0"
}

// stop ends the server's process group: SIGTERM, then SIGKILL after
// stopGrace.
func (p *proc) stop() { p.Stop(stopGrace) }

// portFree checks that nobody listens on addr.
func portFree(addr string) error {
	_, err := procs.FreeAddr(addr)
	return err
}

// command runs a client program to completion (bounded by ctx) and returns
// its combined output; the output is also kept for -v.
func (h *harness) command(ctx context.Context, dir string, stdin io.Reader, argv ...string) (string, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stdin = stdin
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	s := out.String()
	h.record(strings.Join(argv, " "), []byte(s))
	if err != nil {
		return s, fmt.Errorf("%s: %v; output: %q", filepath.Base(argv[0]), err, tail(s, 300))
	}
	return s, nil
}

// tempDir makes a folder for one case's files under the run's folder.
func (h *harness) tempDir(name string) (string, error) {
	return os.MkdirTemp(filepath.Dir(h.o.bin), name+"-")
}

// oneLine makes an evidence line: line breaks become spaces (spaces inside
// quoted replies are kept: they can be the point).
func oneLine(s string) string {
	s = strings.TrimSpace(strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\t", " ").Replace(s))
	if len(s) > 240 {
		s = s[:237] + "..."
	}
	return s
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func indent(s string) string {
	return "      " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n      ")
}

// sortedKeys is for deterministic evidence lines built from maps.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
