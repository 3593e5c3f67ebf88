// Package trywrite is chapter 03's fast path for answers: one non-blocking
// attempt to write to a connection's socket, from the goroutine that made the
// answer, instead of waking the connection's writer goroutine.
//
// It is given code, not a chapter's, because it needs a raw descriptor: with
// it here, the chapter's own code needs nothing of package syscall, and the
// grader can refuse raw descriptors in the student's code outright.
package trywrite

import "net"

// Socket is the socket under one connection, or nothing (a connection that is
// not a socket, or a system without the fast path): then Write takes nothing.
type Socket struct {
	raw  rawConn
	seen func(p []byte) // Observed's hook, or nil
}

// New returns the socket under c. It never fails: a connection without a
// socket underneath gives a Socket whose Write always returns 0.
func New(c net.Conn) Socket { return Socket{raw: rawOf(c)} }

// Write makes one non-blocking attempt to write p and returns how many bytes
// the socket took: all of p in the steady state, fewer or none when the
// client's receive window is full, none on an error (the connection's writer
// will meet it again) or when there is no socket. It never waits.
func (s Socket) Write(p []byte) int {
	if s.raw == nil || len(p) == 0 {
		return 0
	}
	n := writeOnce(s.raw, p)
	if n > 0 && s.seen != nil {
		s.seen(p[:n])
	}
	return n
}

// Observed returns s with a hook that Write calls with the bytes the socket
// took, before it returns; nil means none. It is a seam for tests: while the
// hook runs, the answer is on its way to the client and the goroutine that
// wrote it has not gone on, so a test can see what that goroutine did before
// its write, and what it left for after (chapter 03 counts an answer before
// it is sent).
func (s Socket) Observed(hook func(p []byte)) Socket {
	s.seen = hook
	return s
}
