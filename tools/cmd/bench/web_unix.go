//go:build unix

package main

import (
	"bytes"
	"fmt"
	"net/netip"
	"syscall"
	"time"
)

// selfCPU is this process's CPU time so far (user + system): the load
// generator's.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// fetch asks for uri on a connection of its own, reads the reply to the end
// and checks it: status 200 and, if size >= 0, a body of size bytes. It
// notes when the first and the last byte arrived.
//
// It uses a blocking socket, read by plain system calls, not package net:
// a goroutine blocked in a system call is woken by the kernel the moment its
// data arrives, while a goroutine waiting in Go's network poller is found
// only when the scheduler next polls, which, while other goroutines are busy
// reading large files, can be 10 ms later (the runtime's sysmon) — enough to
// scramble the order of files served microseconds apart.
//
// The receive buffer is small (16 KiB, set before connect so that the window
// stays small): with the kernel's loopback defaults, megabytes, a worker
// would hand a whole large file to the kernel in microseconds and move on,
// and every file would start within the same millisecond. With it, the
// worker sends at the pace the client reads, as over a real network, and a
// file's first and last bytes show when the worker was on it.
func fetch(addr, uri string, size int, deadline time.Time) fetchResult {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().Is4() {
		return fetchResult{err: fmt.Errorf("fetch: %q is not an IPv4 address and port", addr)}
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		return fetchResult{err: err}
	}
	defer syscall.Close(fd)
	tv := syscall.NsecToTimeval(int64(time.Until(deadline)))
	err = errorsJoin(
		syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_RCVBUF, 16<<10),
		syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv),
		syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_SNDTIMEO, &tv),
	)
	if err != nil {
		return fetchResult{err: err}
	}
	if err := syscall.Connect(fd, &syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}); err != nil {
		return fetchResult{err: err}
	}
	if _, err := syscall.Write(fd, fmt.Appendf(nil, "GET %s HTTP/1.0\r\n\r\n", uri)); err != nil {
		return fetchResult{err: err}
	}
	var r fetchResult
	head := make([]byte, 0, 512)
	buf := make([]byte, 64<<10)
	total := 0
	for {
		n, err := syscall.Read(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fetchResult{err: fmt.Errorf("after %d bytes: %w", total, err)}
		}
		if n == 0 {
			break
		}
		if total == 0 {
			r.first = time.Now()
		}
		if len(head) < cap(head) {
			head = append(head, buf[:min(n, cap(head)-len(head))]...)
		}
		total += n
	}
	r.done = time.Now()
	if !bytes.HasPrefix(head, []byte("HTTP/1.0 200 ")) {
		line, _, _ := bytes.Cut(head, []byte("\r\n"))
		return fetchResult{err: fmt.Errorf("status line %q", line)}
	}
	end := bytes.Index(head, []byte("\r\n\r\n"))
	if body := total - end - 4; size >= 0 && (end < 0 || body != size) {
		return fetchResult{err: fmt.Errorf("body of %d bytes, want %d", body, size)}
	}
	return r
}

// errorsJoin returns the first error that is not nil.
func errorsJoin(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
