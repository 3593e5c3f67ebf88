package load

import (
	"context"
	"net"
	"time"
)

// Dial connects to addr, giving up after timeout, and ties the connection to
// ctx: once ctx is done the connection is closed, so a Do blocked in Read or
// Write returns at once instead of waiting for its deadline. Closing the
// connection unties it. A mode's NewClient typically calls
// Dial(ctx, "tcp", addr, timeout) with the run's ctx and sets a per-request
// deadline in Do.
func Dial(ctx context.Context, network, addr string, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &tiedConn{Conn: conn, untie: context.AfterFunc(ctx, func() { conn.Close() })}, nil
}

// tiedConn is a connection closed by its context; Close releases the tie, so
// that a client reconnecting many times does not pile up callbacks.
type tiedConn struct {
	net.Conn
	untie func() bool
}

func (c *tiedConn) Close() error {
	c.untie()
	return c.Conn.Close()
}
