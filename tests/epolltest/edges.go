//go:build linux

package epolltest

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"serverlab/tests/testkit"
)

// checkPendingLimit: MaxPending is the most unsent output a connection may
// have; a reply that would pass it closes the connection (the client that
// asked for it sees its connection closed, never half a reply), one that
// reaches it exactly is queued and sent whole. Write queues before it sends,
// so the first reply of a fresh connection is all unsent when the limit is
// applied: a reply one byte under, at, and one byte over MaxPending, each on
// a server of its own, shows a limit off by one either way.
func checkPendingLimit(k *testkit.T, impl Impl) {
	k.Helper()
	const repeat, line = 1000, "0123456789"
	size := len("0 ") + repeat*len(line) + len("\n") // the first reply a server sends
	for _, tc := range []struct {
		maxPending int
		closed     bool
	}{{size + 1, false}, {size, false}, {size - 1, true}} {
		srv := newEcho(k, impl, EchoConfig{Repeat: repeat, Limits: Limits{HighWater: tc.maxPending, MaxPending: tc.maxPending}})
		c := k.Dial(srv)
		c.WriteLine(line)
		count, got, err := readEcho(c)
		what := fmt.Sprintf("with MaxPending %d, a client asked for a %d-byte reply (%d × %q)", tc.maxPending, size,
			repeat, line)
		switch {
		case tc.closed && err == nil:
			k.Fatalf("%s and got it: a reply that would take the unsent output past MaxPending closes the "+
				"connection (compare the output queued plus the new bytes with the limit)%s", what, c.Context())
		case tc.closed && !testkit.IsClosed(err):
			k.Fatalf("%s: want the connection closed, got %s%s", what, testkit.Describe(err), c.Context())
		case !tc.closed && err != nil:
			k.Fatalf("%s: want the reply, whole (the limit is reached, not passed: only more than MaxPending "+
				"unsent bytes closes the connection), got %s%s", what, testkit.Describe(err), c.Context())
		case !tc.closed && (count != 0 || got != strings.Repeat(line, repeat)):
			k.Fatalf("%s\n  want: 0 %.60q…\n   got: %d %.60q…%s", what, strings.Repeat(line, repeat), count, got,
				c.Context())
		}
		c.Close()
	}
}

// interruptThreads sends SIGURG to every thread of process pid: a thread
// blocked in epoll_wait returns EINTR (epoll_wait is never restarted after a
// signal handler, whatever SA_RESTART says). Go's runtime takes SIGURG as a
// preemption request, so the signal is harmless to the process; it is what
// the runtime itself sends, at random moments, to a goroutine that runs long.
func interruptThreads(pid int) (sent int, err error) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0, err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if unix.Tgkill(pid, tid, unix.SIGURG) == nil {
			sent++
		}
	}
	return sent, nil
}

// checkInterrupted: a signal that interrupts epoll_wait (EINTR) is no error;
// the loop waits again. Between echo round trips, every thread of the
// server's process gets SIGURG a few times, so the loop's thread is
// interrupted while it sleeps in epoll_wait; the server must go on serving.
func checkInterrupted(k *testkit.T, impl Impl) {
	k.Helper()
	srv := newEcho(k, impl, EchoConfig{})
	c := k.Dial(srv)
	for round := range 50 {
		echoTrip(k, c, 1, "ping")
		for range 3 {
			if _, err := interruptThreads(testkit.ServerPID()); err != nil {
				k.Fatalf("interrupting the server's threads: %v", err)
			}
		}
		if err, stopped := srv.Stopped(); stopped {
			k.Fatalf("the server's threads got SIGURG (as Go's runtime sends to preempt a goroutine) in round %d; "+
				"Serve returned %v.\nepoll_wait fails with EINTR when a signal arrives while it sleeps: that "+
				"is no error, wait again", round+1, err)
		}
	}
	echoTrip(k, c, 1, "still there")
}
