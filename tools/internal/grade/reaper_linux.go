package grade

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// becomeSubreaper makes the grader the child subreaper of everything it
// starts: a process that double-forks or calls setsid to leave its test's
// process group is re-parented to the grader rather than to init, so
// sweepOrphans still finds it.
func becomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// sweepOrphans kills every child of the grader that the grader did not start
// itself (orphans re-parented to it), and their descendants, and reaps them.
// It repeats until none is left: killing one may orphan its children.
func sweepOrphans() {
	self := os.Getpid()
	for range 20 {
		children.mu.Lock()
		orphans := 0
		for pid, ppid := range processes() {
			if ppid != self || children.pids[pid] {
				continue
			}
			orphans++
			killTree(pid)
			reap(pid)
		}
		children.mu.Unlock()
		if orphans == 0 {
			return
		}
	}
}

// reap waits for a killed orphan, but not forever: one stuck in the kernel
// must not stop the grader.
func reap(pid int) {
	for range 100 {
		var ws unix.WaitStatus
		if got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil); got == pid || err != nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// killTree kills pid and every process below it.
func killTree(pid int) {
	_ = syscall.Kill(pid, syscall.SIGSTOP) // no more forking while we look
	procs := processes()
	for child, ppid := range procs {
		if ppid == pid {
			killTree(child)
		}
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// processes maps every visible pid to its parent, from /proc.
func processes() map[int]int {
	out := map[int]int{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		b, err := os.ReadFile(d + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(f[1]); err == nil {
			out[pid] = ppid
		}
	}
	return out
}
