//go:build unix

package procs

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"serverlab/tools/internal/procs/procstest"
	"serverlab/tools/internal/procstat"
)

// The test binary doubles as the servers the tests start (procstest's modes).
func TestMain(m *testing.M) { procstest.Main(m) }

func linuxOnly(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("checks processes through Linux's /proc")
	}
}

func fake(t *testing.T, mode string, group bool, stdout io.Writer) *Process {
	t.Helper()
	p, err := Start(Spec{Path: os.Args[0], Env: []string{procstest.Env + "=" + mode}, Group: group, Stdout: stdout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Kill() })
	return p
}

// gone reports whether pid no longer runs (a zombie nobody reaped counts as
// gone: it runs nothing).
func gone(pid int) bool {
	_, err := procstat.Read(pid)
	return errors.Is(err, procstat.ErrExited)
}

func TestStartWaitStop(t *testing.T) {
	linuxOnly(t)
	for _, wait := range []string{"WaitDialable", "WaitListening"} {
		t.Run(wait, func(t *testing.T) {
			addr, err := FreeAddr("")
			if err != nil {
				t.Fatal(err)
			}
			p := fake(t, addr, false, nil)
			ready := p.WaitDialable
			if wait == "WaitListening" {
				ready = p.WaitListening
			}
			if err := ready(context.Background(), addr, 10*time.Second); err != nil {
				t.Fatalf("%s(%s): %v", wait, addr, err)
			}
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err != nil {
				t.Fatalf("ready, but dialling %s: %v", addr, err)
			}
			c.SetDeadline(time.Now().Add(5 * time.Second))
			io.WriteString(c, "ping\n")
			if line, err := bufio.NewReader(c).ReadString('\n'); line != "ping\n" {
				t.Fatalf("sent ping, the echo answered %q (%v)", line, err)
			}
			c.Close()
			if got := p.Stop(5 * time.Second); got != Terminated {
				t.Errorf("Stop = %v, want Terminated (%d): the fake exits on SIGTERM", got, Terminated)
			}
			if p.Alive() || p.Err() != nil || !gone(p.PID()) {
				t.Errorf("after Stop: alive %v, exit %v, pid %d gone %v; want dead, status 0, gone", p.Alive(), p.Err(), p.PID(), gone(p.PID()))
			}
			if got := p.Stop(time.Second); got != ExitedBefore {
				t.Errorf("a second Stop = %v, want ExitedBefore (%d)", got, ExitedBefore)
			}
		})
	}
}

func TestWaitSeesAnEarlyExit(t *testing.T) {
	linuxOnly(t)
	p := fake(t, "exit", false, nil)
	start := time.Now()
	err := p.WaitDialable(context.Background(), "127.0.0.1:1", 10*time.Second)
	if !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "exited before listening on 127.0.0.1:1") {
		t.Fatalf("a server that exits at once: wait says %v, want ErrExited", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("the wait took %v: it must notice the exit, not run out its time", time.Since(start))
	}
	var ee *exec.ExitError
	if !errors.As(p.Err(), &ee) || ee.ExitCode() != 3 {
		t.Errorf("Err = %v, want exit status 3", p.Err())
	}
}

// WaitListening must not take someone else's socket on the port for the
// server's: here the test itself listens, and the fake listens nowhere.
func TestWaitListeningIgnoresOthersSockets(t *testing.T) {
	linuxOnly(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	p := fake(t, "idle", false, nil)
	err = p.WaitListening(context.Background(), ln.Addr().String(), 300*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "not listening on") {
		t.Fatalf("WaitListening on a port only the test holds: %v, want a time-out", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.WaitListening(ctx, ln.Addr().String(), 10*time.Second); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitListening with a cancelled context: %v, want context.Canceled", err)
	}
}

// A server that ignores SIGTERM is killed after the grace period, and with
// Group so is the child it started: no process is left.
func TestStopKillsTheGroup(t *testing.T) {
	linuxOnly(t)
	addr, err := FreeAddr("")
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(t.TempDir(), "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	p := fake(t, "forker="+addr, true, out)
	if err := p.WaitDialable(context.Background(), addr, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out.Name()) // written before the fake listened
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("the fake's stdout %q: %v", b, err)
	}
	t.Cleanup(func() { syscall.Kill(child, syscall.SIGKILL) })
	if gone(child) {
		t.Fatalf("the fake's child %d is not running before Stop", child)
	}
	start := time.Now()
	if got := p.Stop(200 * time.Millisecond); got != Killed {
		t.Errorf("Stop = %v, want Killed (%d): the fake ignores SIGTERM", got, Killed)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Stop took %v with a grace period of 200ms", d)
	}
	deadline := time.Now().Add(5 * time.Second) // the child is not ours to reap: wait for the kernel
	for !gone(child) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !gone(p.PID()) || !gone(child) {
		t.Errorf("after Stop: server %d gone %v, its child %d gone %v; want both gone", p.PID(), gone(p.PID()), child, gone(child))
	}
}

func TestFreeAddr(t *testing.T) {
	addr, err := FreeAddr("")
	if err != nil || !strings.HasPrefix(addr, "127.0.0.1:") || strings.HasSuffix(addr, ":0") {
		t.Fatalf("FreeAddr(\"\") = %q, %v; want 127.0.0.1 with a port", addr, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if _, err := FreeAddr(addr); err == nil {
		t.Errorf("FreeAddr(%s) while the test listens there: no error", addr)
	}
	if port, err := FreePort(); err != nil || port <= 0 {
		t.Errorf("FreePort = %d, %v", port, err)
	}
}

func TestParseProcNetTCP(t *testing.T) {
	table := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
		"   0: 0100007F:1388 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2768335 2 0 100 0 0 10 0\n" +
		"   1: 0100007F:1770 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2721147 2 0 100 0 0 10 0\n" +
		"   2: 0100007F:1388 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 2799999 2 0 100 0 0 10 0\n"
	recorded, err := os.ReadFile("testdata/proc-net-tcp.txt") // a table from a real machine
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		table, port string
		want        []string
		what        string
	}{
		{table, ":1388", []string{"2768335"}, "port 5000: only the LISTEN socket, not the connection"},
		{table, ":1770", []string{"2721147"}, "port 6000"},
		{table, ":2328", nil, "port 9000: none"},
		{string(recorded), ":8823", []string{"2768335"}, "recorded /proc/net/tcp"},
	} {
		got := parseProcNetTCP(c.table, c.port)
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: want %q, got %q", c.what, c.want, got)
		}
	}
}

func TestPlaceholders(t *testing.T) {
	got := Placeholders("127.0.0.1:6000", "{dir}", "/tmp/x").Replace("-addr={addr} -p {port} -d {dir} {knob}")
	if want := "-addr=127.0.0.1:6000 -p 6000 -d /tmp/x {knob}"; got != want {
		t.Errorf("Placeholders: got %q, want %q", got, want)
	}
}
