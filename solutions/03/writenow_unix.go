//go:build unix

package jobserver

import "syscall"

// writeNow makes one non-blocking attempt to write p to the client's socket
// and returns how many bytes the socket took: all of p in the steady state,
// fewer or none when the client's receive window is full, none on an error
// (the writer will meet it again and drop the client) or when the connection
// has no socket underneath (c.raw is nil).
//
// It is the fast path of send: the answer leaves from the worker that made
// it, with one write system call, instead of waking the writer goroutine.
// The connection's file descriptor is non-blocking (the Go runtime's
// netpoller made it so), and the function given to RawConn.Write returns
// true whatever happened, which tells Write never to wait for the socket to
// become writable: a worker never waits for a client.
func (c *clientConn) writeNow(p []byte) int {
	if c.raw == nil {
		return 0
	}
	written := 0
	c.raw.Write(func(fd uintptr) bool { // an error (closed, deadline passed) leaves written at 0
		n, err := syscall.Write(int(fd), p)
		if err == nil {
			written = n
		}
		return true // done: never wait for the socket
	})
	return written
}
