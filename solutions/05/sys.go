//go:build linux

package evloop

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The loop's system calls that never block: read and write on non-blocking
// sockets, and epoll_wait with a zero timeout.
//
// unix.Read, unix.Write and unix.EpollWait go through syscall.Syscall, which
// tells the Go scheduler "this thread may block in the kernel now"
// (entersyscall). If the call then takes more than 20 µs — and a write that
// wakes the client is often preempted by that client for longer than that —
// the runtime's monitor thread (sysmon) takes the loop's P away and wakes
// another thread to run it (a futex wake-up, a context switch), and the loop
// has to get a P back when the call returns. With one goroutine doing all the
// work, that dance is pure overhead: measured on the stock server, the Go
// threads made ~0.3 futex and nanosleep calls per query besides the read and
// the write (docs/bench-ch05.md). A system call that cannot block may skip
// it: unix.RawSyscall enters the kernel without telling the scheduler, like
// a C program does. The loop blocks in exactly one place, wait, which still
// uses the ordinary, scheduler-aware call.

// rawRead is read(2) on a non-blocking fd.
func rawRead(fd int, p []byte) (int, error) {
	r, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// rawWrite is write(2) on a non-blocking fd.
func rawWrite(fd int, p []byte) (int, error) {
	r, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// pollNow is epoll_wait with a zero timeout: the events that are ready now,
// without sleeping.
func pollNow(epfd int, events []unix.EpollEvent) (int, error) {
	r, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(unsafe.SliceData(events))),
		uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}
