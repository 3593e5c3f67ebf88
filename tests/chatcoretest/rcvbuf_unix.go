//go:build unix

package chatcoretest

import "syscall"

// smallReceiveBuffer sets SO_RCVBUF on a socket before it connects, so that
// the kernel advertises a small window from the start and buffers little for
// a client that does not read: what the server holds for it is then mostly
// its outbox, which is what the check measures.
func smallReceiveBuffer(c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 16<<10)
	})
	if err != nil {
		return err
	}
	return serr
}
