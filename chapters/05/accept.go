//go:build linux

package evloop

import (
	"net/netip"

	"golang.org/x/sys/unix"
)

// acceptAll accepts every pending connection. The listener is level-triggered,
// so stopping early would be safe too: epoll reports it again while the
// accept queue is not empty.
func (l *Loop) acceptAll() {
	for {
		fd, sa, err := l.accept4()
		switch err {
		case nil:
			l.opened(fd, sa)
		case unix.EINTR, unix.ECONNABORTED:
			continue // interrupted, or the client gave up while queued: try the next one
		case unix.EAGAIN:
			return // the accept queue is empty
		case unix.EMFILE, unix.ENFILE:
			if !l.acceptFailed() {
				return
			}
		default:
			l.log.Error("accept", "err", err)
			return
		}
	}
}

// acceptFaults is implemented by a listener that makes accepting fail on
// purpose: the server contract's check (tests/testkit) wraps the listener to
// make accept fail with EMFILE, ENFILE and ECONNABORTED. The loop accepts on
// the socket itself and never calls ln.Accept, where such a listener would
// fail, so it asks the listener before each accept4 instead.
type acceptFaults interface {
	// AcceptFault returns the error accept4 is to fail with, or nil.
	AcceptFault() error
}

// accept4 accepts a pending connection on the loop's listening socket, unless
// the listener Serve was given injects a fault (acceptFaults).
func (l *Loop) accept4() (int, unix.Sockaddr, error) {
	if f, ok := l.ln.(acceptFaults); ok {
		if err := f.AcceptFault(); err != nil {
			return -1, nil, err
		}
	}
	return unix.Accept4(l.lnfd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
}

// acceptFailed handles accept4 failing for lack of fds (EMFILE: this process's
// limit; ENFILE: the system's). The client stays in the accept queue, so the
// level-triggered listener stays readable: doing nothing would make the loop
// spin at 100% CPU, retrying accept in vain.
//
// The way out (libev's and nginx's): keep one fd in reserve. Give it up,
// accept the client, close it at once (the client sees the connection
// closed instead of hanging), and take the reserve back. If there is no
// reserve, take the listener out of the interest list until a connection
// closes and frees an fd. It reports whether the caller may try accepting
// again.
func (l *Loop) acceptFailed() bool {
	// TODO(ex 5.7): Done when: out of file descriptors, the loop neither spins
	// nor leaves the waiting client hanging: with a spare descriptor, it gives
	// the spare up, accepts the waiting client and closes it at once (it learns
	// the server is full, and the backlog empties), takes the spare again, and
	// reports whether that accept got a client (accept says EMFILE even with
	// nobody waiting, so retrying after an empty one would spin); without a
	// spare, it pauses accepting and reports false. Checked by
	// TestEx5_7_EMFILE.
	l.log.Error("Loop.acceptFailed is not implemented yet (ex 5.7): out of fds")
	return false
}

// pauseAccept takes the listener out of the interest list (see acceptFailed).
func (l *Loop) pauseAccept() {
	if l.paused {
		return
	}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, l.lnfd, nil); err == nil {
		l.paused = true
	}
}

// resumeAccept is called when a connection closes: an fd is free again, for
// the reserve first and then for accepting.
func (l *Loop) resumeAccept() {
	if l.draining {
		return
	}
	if l.spare < 0 {
		l.spare = openSpare()
	}
	if l.paused && l.ctl(unix.EPOLL_CTL_ADD, l.lnfd, 0, unix.EPOLLIN) == nil {
		l.paused = false
	}
}

// opened registers a freshly accepted socket.
func (l *Loop) opened(fd int, sa unix.Sockaddr) {
	// One write per reply already; with Nagle's algorithm on, a reply that
	// follows an unacknowledged one would wait for the peer's delayed ACK.
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	l.nextID++
	if l.nextID == 0 {
		l.nextID = 1 // 0 is the listener's and the eventfd's id
	}
	c := &Conn{loop: l, fd: fd, id: l.nextID, remote: addrPort(sa)}
	if err := l.ctl(unix.EPOLL_CTL_ADD, fd, c.id, unix.EPOLLIN|unix.EPOLLRDHUP); err != nil {
		l.log.Error("register connection", "err", err)
		unix.Close(fd)
		return
	}
	c.events = unix.EPOLLIN | unix.EPOLLRDHUP
	if fd >= len(l.conns) {
		l.conns = append(l.conns, make([]*Conn, fd+1-len(l.conns))...)
	}
	l.conns[fd] = c
	l.open++
	l.h.Opened(c)
}

// addrPort converts the peer address accept4 returned.
func addrPort(sa unix.Sockaddr) netip.AddrPort {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port))
	case *unix.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(a.Addr), uint16(a.Port))
	}
	return netip.AddrPort{}
}
