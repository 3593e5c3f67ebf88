//go:build linux

package epolltest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/lab"
	"serverlab/tools/wire"
)

// linuxOnly skips a check that needs the loop (epoll) off Linux.
func linuxOnly(k *testkit.T) {
	k.Helper()
	if runtime.GOOS != "linux" {
		k.Skipf("chapter 05's event loop is built on Linux's epoll; this check runs on Linux only (GOOS=%s)", runtime.GOOS)
	}
}

// password is the password the suite registers every user with.
func password(name string) string { return "pw-" + name }

// newChat builds a chat server whose users file holds names, and serves it.
func newChat(k *testkit.T, impl Impl, limits Limits, names ...string) *testkit.Server {
	k.Helper()
	return newChatConfig(k, impl, ChatConfig{Limits: limits}, names...)
}

// newChatConfig is newChat with more settings.
func newChatConfig(k *testkit.T, impl Impl, cfg ChatConfig, names ...string) *testkit.Server {
	k.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen on 127.0.0.1:0: %v", err)
	}
	return newChatOn(k, impl, cfg, ln, names...)
}

// newChatOn is newChatConfig on a listener the check made.
func newChatOn(k *testkit.T, impl Impl, cfg ChatConfig, ln net.Listener, names ...string) *testkit.Server {
	k.Helper()
	k.Cleanup(func() { ln.Close() })
	path := filepath.Join(k.TempDir(), "users.txt")
	var b strings.Builder
	for i, n := range names {
		fmt.Fprintf(&b, "%s %s 127.0.0.1 %d\n", n, password(n), 40000+i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		k.Fatalf("writing %s: %v", path, err)
	}
	cfg.UsersPath = path
	srv, err := impl.NewChat(cfg)
	if errors.Is(err, lab.ErrNotImplemented) {
		k.Fatalf("building the chat server needs an earlier exercise: %v", err)
	}
	if err != nil {
		k.Fatalf("NewChat: %v", err)
	}
	return k.ServeListener(srv, ln)
}

// newStock builds a stock server on a stock file with the given lines, and
// serves it.
func newStock(k *testkit.T, impl Impl, limits Limits, lines ...string) *testkit.Server {
	k.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen on 127.0.0.1:0: %v", err)
	}
	return newStockOn(k, impl, limits, ln, lines...)
}

// newStockOn is newStock on a listener the check made.
func newStockOn(k *testkit.T, impl Impl, limits Limits, ln net.Listener, lines ...string) *testkit.Server {
	k.Helper()
	k.Cleanup(func() { ln.Close() })
	path := filepath.Join(k.TempDir(), "stock.txt")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		k.Fatalf("writing %s: %v", path, err)
	}
	srv, err := impl.NewStock(StockConfig{StockPath: path, Limits: limits})
	if errors.Is(err, lab.ErrNotImplemented) {
		k.Fatalf("building the stock server needs an earlier exercise: %v", err)
	}
	if err != nil {
		k.Fatalf("NewStock: %v", err)
	}
	return k.ServeListener(srv, ln)
}

// login logs name in on a new connection and checks the OK.
func login(k *testkit.T, srv *testkit.Server, name string) *testkit.Conn {
	k.Helper()
	c := k.Dial(srv)
	c.SendFrame(wire.Frame{Type: wire.Login, Sender: name, Payload: []byte(password(name))})
	c.ExpectFrame(loginOK(name))
	return c
}

func loginOK(name string) wire.Frame {
	return wire.Frame{Type: wire.Login, Sender: wire.ServerName, Target: name, Payload: []byte("OK")}
}

// recordSize is the size of every stock reply (docs/protocols.md §3).
const recordSize = 8192

// readRecord reads one stock reply and returns its text (before the NULs).
func readRecord(c *testkit.Conn) (string, error) {
	rec := make([]byte, recordSize)
	if err := c.TryReadFull(rec); err != nil {
		return "", err
	}
	text, _, _ := strings.Cut(string(rec), "\x00")
	return text, nil
}

// expectRecord reads one record and compares its text with want.
func expectRecord(k *testkit.T, c *testkit.Conn, want string) {
	k.Helper()
	got, err := readRecord(c)
	if err != nil {
		k.Fatalf("want a reply record %q, got %s%s", want, testkit.Describe(err), c.Context())
	}
	if got != want {
		k.Fatalf("wrong reply\n  want: %q\n   got: %q%s", want, got, c.Context())
	}
}

// countOf asks for `show` on c and returns the count of stock id.
func countOf(k *testkit.T, c *testkit.Conn, id int) int {
	k.Helper()
	c.WriteLine("show")
	text, err := readRecord(c)
	if err != nil {
		k.Fatalf("want the reply to show, got %s%s", testkit.Describe(err), c.Context())
	}
	for _, line := range strings.Split(text, "\n")[1:] {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == strconv.Itoa(id) {
			n, err := strconv.Atoi(f[1])
			if err == nil {
				return n
			}
		}
	}
	k.Fatalf("the reply to show has no line for stock %d: %q%s", id, text, c.Context())
	return 0
}

// cpuTime is the CPU time, user and system, the test process has used: the
// server under test runs in it.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// idleCPU measures the share of one core the process uses over window. The
// window is a measurement, not a synchronisation: a loop that waits in
// epoll_wait uses next to nothing, a busy loop a whole core.
func idleCPU(window time.Duration) float64 {
	start, t0 := cpuDemand(), time.Now()
	<-time.After(window)
	return max(0, float64(cpuDemand()-start)/float64(time.Since(t0)))
}

// cpuDemand is the CPU time the test process's threads have used plus the
// time they have spent runnable, waiting for a CPU (the first two fields of
// each thread's /proc schedstat). A loop that spins wants a whole core
// however busy the machine is: on a loaded machine it gets less CPU but waits
// for the rest, so its demand stays near 100% where its CPU time alone would
// drop. A loop that sleeps in epoll_wait has neither. Without schedstat it is
// cpuTime.
func cpuDemand() time.Duration {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return cpuTime()
	}
	var total time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join("/proc/self/task", t.Name(), "schedstat"))
		if err != nil {
			continue // the thread has just exited
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			return cpuTime()
		}
		run, err1 := strconv.ParseInt(f[0], 10, 64)
		wait, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil {
			return cpuTime()
		}
		total += time.Duration(run + wait)
	}
	return total
}

// maxIdleCPU is the share of a core above which an idle server is busy
// looping. An idle loop measures well under 5% here even under -race; a busy
// loop takes 100% of a core.
const maxIdleCPU = 0.3

// openFDs lists the open fds of the test process, each with what it is.
func openFDs(k *testkit.T) map[int]string {
	k.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		k.Fatalf("listing /proc/self/fd: %v", err)
	}
	fds := map[int]string{}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err != nil {
			continue // the fd ReadDir itself used, closed by now
		}
		fds[fd] = target
	}
	return fds
}

// newFDs describes the fds open in after that were not open in before.
func newFDs(before, after map[int]string) string {
	var extra []string
	for fd, what := range after {
		if before[fd] != what {
			extra = append(extra, fmt.Sprintf("fd %d → %s", fd, what))
		}
	}
	sort.Strings(extra)
	return strings.Join(extra, ", ")
}
