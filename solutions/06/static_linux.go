package web

import (
	"io"
	"net"

	"golang.org/x/sys/unix"
)

// writeHeadMore writes a response header that a sendfile(2) of the body will
// follow, with send(2)'s MSG_MORE flag: "more is coming, hold this". The
// kernel keeps the header back and sends it in the same TCP segment as the
// first bytes of the file, where a plain Write would push it out alone (Go
// sets TCP_NODELAY on every connection). One packet fewer per response costs
// the sender a whole trip down (and, on loopback, up) the TCP stack less, and
// wakes the client once instead of twice. nginx gets the same effect from
// "tcp_nopush on" (TCP_CORK), at two setsockopt calls per response; the flag
// costs none.
//
// The write goes through the connection's SyscallConn, so it still waits in
// the network poller if the socket buffer is full and still honours the
// write deadline. Anything that is not a TCP connection gets a plain Write.
func writeHeadMore(w io.Writer, head []byte) error {
	tc, ok := w.(*net.TCPConn)
	if !ok {
		_, err := w.Write(head)
		return err
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return err
	}
	var sendErr error
	err = rc.Write(func(fd uintptr) bool {
		for len(head) > 0 {
			n, err := unix.SendmsgN(int(fd), head, nil, nil, unix.MSG_MORE)
			switch {
			case err == unix.EAGAIN:
				return false // wait until the socket is writable, then call again
			case err == unix.EINTR:
				continue
			case err != nil:
				sendErr = err
				return true
			}
			head = head[n:]
		}
		return true
	})
	if err != nil {
		return err
	}
	return sendErr
}
