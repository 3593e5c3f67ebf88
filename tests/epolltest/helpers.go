//go:build linux

package epolltest

import (
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

	"serverlab/tests/judge"
	"serverlab/tests/testkit"
)

// linuxOnly skips a check that needs the loop (epoll) off Linux.
func linuxOnly(k *testkit.T) {
	k.Helper()
	if runtime.GOOS != "linux" {
		k.Skipf("chapter 05's event loop is built on Linux's epoll; this check runs on Linux only (GOOS=%s)", runtime.GOOS)
	}
}

// newEcho builds an echo server and serves it.
func newEcho(k *testkit.T, impl Impl, cfg EchoConfig) *testkit.Server {
	k.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen on 127.0.0.1:0: %v", err)
	}
	return newEchoOn(k, impl, cfg, ln)
}

// newEchoOn is newEcho on a listener the check made.
func newEchoOn(k *testkit.T, impl Impl, cfg EchoConfig, ln net.Listener) *testkit.Server {
	k.Helper()
	k.Cleanup(func() { ln.Close() })
	srv, err := impl.NewEcho(cfg)
	if err != nil {
		k.Fatalf("NewEcho: %v", err)
	}
	return k.ServeListener(srv, ln)
}

// readEcho reads one reply of the echo server: its count (the lines the
// server answered before) and its text (the copies of the line).
func readEcho(c *testkit.Conn) (count int, text string, err error) {
	line, err := c.TryReadLine()
	if err != nil {
		return 0, line, err
	}
	num, text, ok := strings.Cut(line, " ")
	count, cerr := strconv.Atoi(num)
	if !ok || cerr != nil {
		return 0, line, fmt.Errorf("not an echo reply (\"count text\"): %.80q", line)
	}
	return count, text, nil
}

// echoTrip sends line on c, reads its reply (repeat copies of line) and
// returns the reply's count. The loop is one goroutine and epoll is
// level-triggered: once the reply is back, every connection that was
// readable before line was sent has been read.
func echoTrip(k *testkit.T, c *testkit.Conn, repeat int, line string) int {
	k.Helper()
	c.WriteLine(line)
	count, got, err := readEcho(c)
	if err != nil {
		k.Fatalf("want the echo of %q, got %s (partial: %.80q)%s", line, testkit.Describe(err), got, c.Context())
	}
	if want := strings.Repeat(line, repeat); got != want {
		k.Fatalf("wrong echo of %q\n  want: %.120q\n   got: %.120q%s", line, want, got, c.Context())
	}
	return count
}

// cpuTime is the CPU time, user and system, the test process has used: the
// server under test runs in it.
func cpuTime() time.Duration {
	if judge.IsJudge() {
		return subjectCPU()
	}
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

// idleCPUNoFDs is idleCPU for a process out of fds: it measures CPU time
// alone (getrusage opens nothing), since reading /proc could take the fd
// the server is about to reopen its reserve with.
func idleCPUNoFDs(window time.Duration) float64 {
	start, t0 := cpuTime(), time.Now()
	<-time.After(window)
	return max(0, float64(cpuTime()-start)/float64(time.Since(t0)))
}

// cpuDemand is the CPU time the test process's threads have used plus the
// time they have spent runnable, waiting for a CPU (the first two fields of
// each thread's /proc schedstat). A loop that spins wants a whole core
// however busy the machine is: on a loaded machine it gets less CPU but waits
// for the rest, so its demand stays near 100% where its CPU time alone would
// drop. A loop that sleeps in epoll_wait has neither. Without schedstat it is
// cpuTime.
func cpuDemand() time.Duration {
	tasks, err := os.ReadDir(testkit.ServerProc() + "/task")
	if err != nil {
		return cpuTime()
	}
	var total time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(testkit.ServerProc(), "task", t.Name(), "schedstat"))
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
	dir := testkit.ServerProc() + "/fd"
	entries, err := os.ReadDir(dir)
	if err != nil {
		k.Fatalf("listing %s: %v", dir, err)
	}
	fds := map[int]string{}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
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

// subjectCPU is the subject's processor time (utime and stime of its
// /proc stat, in clock ticks of 10ms), under tools/cmd/grade.
func subjectCPU() time.Duration {
	b, err := os.ReadFile(testkit.ServerProc() + "/stat")
	if err != nil {
		return 0
	}
	// The fields after the command name, which is in parentheses.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
