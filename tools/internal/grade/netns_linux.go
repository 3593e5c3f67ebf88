package grade

import (
	"fmt"
	"os"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// A network namespace of one exercise's own, which its judge and its subject
// share and nothing else does. The judge reaches the subject's servers on
// 127.0.0.1 (and the subject the judge's listeners), so the two must share
// one; the host's network must not be reachable from it: on the host's
// loopback listen other gradings' judges and subjects, the instructor's
// services, and /proc/net/tcp names them all. A subject there could read
// another exercise's ports and flood them (an outside tester did, and the
// untouched reference solution graded beside it lost 15–30 points), or talk
// to another student's server through an abstract Unix socket, which a
// network namespace holds too.
//
// Making one needs CAP_SYS_ADMIN over the host's network, which only a
// grader running as root has: an unprivileged grader's subject lives in a
// user namespace of its own, and its judge, outside it, could not join a
// network namespace that user namespace owns. That grader shares the host's
// network, and its report says so (studentUser).
//
// The namespace is made on a thread of the grader's own, and the judge and
// the subject are started from threads moved into it: a child starts in the
// network namespace of the thread that forks it. Those threads are never
// handed back to the Go scheduler (their goroutines end while locked to
// them, and the runtime then ends the thread), so no other goroutine of the
// grader ever runs in an exercise's network.
type netns struct {
	mu sync.Mutex
	fd int // /proc/thread-self/ns/net of a thread that made it; -1 once closed
}

// netnsAvailable reports, once, whether the grader can give exercises a
// network of their own.
var netnsAvailable = sync.OnceValue(func() bool {
	if os.Geteuid() != 0 {
		return false
	}
	n, err := newNetns()
	if err != nil {
		return false
	}
	n.close()
	return true
})

// newNetns makes a network namespace with its loopback interface up (a new
// one has only lo, down: nothing could even listen on 127.0.0.1).
func newNetns() (*netns, error) {
	type made struct {
		fd  int
		err error
	}
	c := make(chan made, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		fd, err := func() (int, error) {
			if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
				return -1, fmt.Errorf("new network namespace: %w", err)
			}
			if err := loopbackUp(); err != nil {
				return -1, err
			}
			return unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		}()
		c <- made{fd, err}
	}()
	m := <-c
	if m.err != nil {
		return nil, m.err
	}
	return &netns{fd: m.fd}, nil
}

// loopbackUp sets the flag IFF_UP of lo, as `ip link set lo up` does, in the
// calling thread's network namespace.
func loopbackUp() error {
	s, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("bring lo up: %w", err)
	}
	defer unix.Close(s)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("bring lo up: %w", err)
	}
	if err := unix.IoctlIfreq(s, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring lo up: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(s, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring lo up: %w", err)
	}
	return nil
}

// do calls start (which starts a process) on a thread in the namespace, so
// that the process starts in it. A nil n calls it where the caller is.
func (n *netns) do(start func() error) error {
	if n == nil {
		return start()
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.fd < 0 {
		return fmt.Errorf("the exercise's network namespace is closed")
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if err := unix.Setns(n.fd, unix.CLONE_NEWNET); err != nil {
			done <- fmt.Errorf("enter the exercise's network namespace: %w", err)
			return
		}
		done <- start()
	}()
	return <-done
}

// close lets the namespace go once its last process has ended.
func (n *netns) close() {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.fd >= 0 {
		unix.Close(n.fd)
		n.fd = -1
	}
}
