//go:build linux

package evloop

import (
	"time"

	"golang.org/x/sys/unix"

	"serverlab/tools/given/rawsys"
)

// A connection that ends after its last words — a refused login, echo's
// "bye", the stock server's exit, the loop's own shutdown — lingers before it
// is closed. Closing a socket whose receive queue still holds bytes the
// client sent makes the kernel answer with a reset instead of the end of the
// stream, and a reset destroys whatever the client has not read yet: the
// very answer that explained the close. So once the last words are sent the
// loop shuts the write side (the client reads them and then the end of the
// stream at once), keeps reading, discards what arrives, and closes at the
// client's end of stream, or after lingerTime, or past lingerBytes, so that a
// client that keeps its side open or floods cannot hold the connection.
// These are chapter 03's numbers, and guard.Linger's for chapters 07 and 08.
const (
	lingerTime  = 500 * time.Millisecond
	lingerBytes = 256 << 10
)

// linger half-closes c, whose last words have all been sent, and watches it
// for reading alone until discard or scanLinger closes it. The handler hears
// of it (Closed) only then, and Write refuses c meanwhile (c.closing).
func (l *Loop) linger(c *Conn) {
	if c.closed || c.lingering {
		return
	}
	c.closing, c.lingering, c.paused = true, true, false
	c.in = nil
	if err := unix.Shutdown(c.fd, unix.SHUT_WR); err != nil {
		l.close(c, nil) // the client is gone already: nothing to linger for
		return
	}
	want := uint32(unix.EPOLLIN | unix.EPOLLRDHUP)
	if c.events != want {
		if err := l.ctl(unix.EPOLL_CTL_MOD, c.fd, c.id, want); err != nil {
			l.close(c, nil)
			return
		}
		c.events = want
	}
	c.lingerUntil = l.now.Add(lingerTime)
	l.lingerers = append(l.lingerers, c)
}

// discard reads what a lingering connection has sent into the loop's shared
// buffer and forgets it; the end of the stream, an error, or more than
// lingerBytes in all closes it. One read per event, as readable does.
func (l *Loop) discard(c *Conn) {
	c.in = nil // what the handler left over when it ended c: never handed over now
	for {
		n, err := rawsys.Read(c.fd, l.buf)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return
		case err != nil || n == 0:
			l.close(c, nil)
			return
		}
		if c.discarded += n; c.discarded > lingerBytes {
			l.close(c, nil)
		}
		return
	}
}

// scanLinger closes the lingering connections whose time is up and returns
// when the next one's is (the zero time: none lingers). Every connection
// lingers for the same time, so the list is in order of deadline: the scan
// stops at the first that has time left, and costs nothing per batch but a
// look at the front.
func (l *Loop) scanLinger(now time.Time) time.Time {
	i := 0
	for ; i < len(l.lingerers); i++ {
		c := l.lingerers[i]
		if !c.closed {
			if now.Before(c.lingerUntil) {
				break
			}
			l.close(c, nil)
		}
	}
	clear(l.lingerers[:i]) // drop the pointers, so closed connections can be collected
	l.lingerers = l.lingerers[i:]
	if len(l.lingerers) == 0 {
		l.lingerers = nil
		return time.Time{}
	}
	return l.lingerers[0].lingerUntil
}
