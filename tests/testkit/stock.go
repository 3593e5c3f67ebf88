package testkit

import (
	"bufio"
	"net"
)

// DialWith is Dial with a dialer of the check's own, e.g. one whose Control
// sets socket options before connecting. The dialer's Timeout is set to
// IOTimeout. The connection is closed at cleanup.
func (k *T) DialWith(d *net.Dialer, s *Server) *Conn {
	k.Helper()
	d.Timeout = IOTimeout
	nc, err := d.Dial("tcp", s.Addr)
	if err != nil {
		k.Fatalf("dial %s: %v%s", s.Addr, err, s.whyDown())
	}
	c := &Conn{k: k, srv: s, conn: nc, r: bufio.NewReader(nc)}
	k.OnAbort(func() { nc.Close() })
	k.Cleanup(func() { nc.Close() })
	return c
}
