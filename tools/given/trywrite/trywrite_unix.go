//go:build unix

package trywrite

import (
	"net"
	"syscall"
)

type rawConn = syscall.RawConn

// rawOf is the raw connection under c, or nil.
func rawOf(c net.Conn) rawConn {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return raw
}

// writeOnce writes p with one write system call. The descriptor is
// non-blocking (the Go runtime's netpoller made it so), and the function
// given to RawConn.Write returns true whatever happened, which tells Write
// never to wait for the socket to become writable.
func writeOnce(raw rawConn, p []byte) int {
	written := 0
	raw.Write(func(fd uintptr) bool { // an error (closed, deadline passed) leaves written at 0
		n, err := syscall.Write(int(fd), p)
		if err == nil {
			written = n
		}
		return true // done: never wait for the socket
	})
	return written
}
