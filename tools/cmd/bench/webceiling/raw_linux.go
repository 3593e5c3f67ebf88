package main

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"

	"golang.org/x/sys/unix"
)

// serveRaw listens on addr with a blocking socket and runs n goroutines that
// each accept4, read, write resp and close, on plain descriptors, until ctx
// is done. Each goroutine blocked in accept4 holds an OS thread: this is the
// pre-threaded C server's shape, written in Go.
func serveRaw(ctx context.Context, addr string, n int, resp []byte) error {
	fd, err := listenBlocking(addr)
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "webceiling: raw, listening on", addr, "with", n, "acceptors")
	return serveFD(ctx, fd, n, resp)
}

// serveFD runs n acceptLoops on the listening descriptor fd until ctx is
// done, then closes fd.
func serveFD(ctx context.Context, fd, n int, resp []byte) error {
	for range n {
		go acceptLoop(fd, resp)
	}
	<-ctx.Done()
	// Closing a descriptor does not wake a thread blocked in accept4 on it;
	// shutdown does (EINVAL), and the process is about to exit anyway.
	unix.Shutdown(fd, unix.SHUT_RDWR)
	return unix.Close(fd)
}

// listenBlocking opens a blocking IPv4 listening socket on addr, with
// TCP_DEFER_ACCEPT (as chapter 06's server and nginx's "deferred"), so accept4
// returns once the request has arrived.
func listenBlocking(addr string) (int, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().Is4() {
		return -1, fmt.Errorf("-addr %q: raw mode wants an IPv4 address and port", addr)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	err = errors.Join(
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1),
		unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_DEFER_ACCEPT, 1),
		unix.Bind(fd, &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}),
		unix.Listen(fd, 4096),
	)
	if err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// acceptLoop serves connections from the listening descriptor fd until
// accept4 fails with anything but a signal interruption or an aborted
// connection.
func acceptLoop(fd int, resp []byte) {
	buf := make([]byte, 4096)
	for {
		c, _, err := unix.Accept4(fd, unix.SOCK_CLOEXEC)
		switch {
		case err == unix.EINTR || err == unix.ECONNABORTED:
			continue
		case err != nil:
			return
		}
		if _, err := unix.Read(c, buf); err == nil {
			unix.Write(c, resp)
		}
		unix.Close(c)
	}
}

// boundPort is the port a listening descriptor is bound to.
func boundPort(fd int) (int, error) {
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return 0, err
	}
	if sa4, ok := sa.(*unix.SockaddrInet4); ok {
		return sa4.Port, nil
	}
	return 0, fmt.Errorf("descriptor %d is not an IPv4 socket", fd)
}

// deferAccept sets TCP_DEFER_ACCEPT on a listening descriptor: accept
// completes once the client's request has arrived. Best effort: it is an
// optimisation only.
func deferAccept(fd uintptr) {
	_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_DEFER_ACCEPT, 1)
}
