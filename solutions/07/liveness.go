package chatcore

import (
	"net"
	"time"

	"serverlab/tools/given/chatcore/proto"
)

// keepAlive turns on TCP keep-alive: after KeepAlive of silence the kernel
// probes the peer, every KeepAlive, and after four unanswered probes the
// connection fails. It finds the clients that vanished without a FIN or RST
// (a crashed machine, a pulled cable) — the original kept those logged in
// until it restarted.
func (s *Server) keepAlive(nc net.Conn) {
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetKeepAliveConfig(net.KeepAliveConfig{
			Enable: true, Idle: s.cfg.KeepAlive, Interval: s.cfg.KeepAlive, Count: 4,
		})
	}
}

// readDeadline is how long the reader waits for c's next frame:
//   - unauthenticated: until c.loginBy (LoginTimeout after the connection
//     started or logged out), so that idle connections cannot hold file
//     descriptors for ever;
//   - authenticated and sending heartbeats: IdleTimeout from now, so that a
//     client that hung, or whose network went away, is logged out;
//   - authenticated without heartbeats (the original's clients): MaxIdle
//     from now (30 min) — they never promised to speak, TCP keep-alive finds
//     the dead ones, and MaxIdle the live ones that hold a descriptor for
//     nothing.
func (s *Server) readDeadline(c *conn) time.Time {
	switch {
	case s.session(c) == nil:
		return c.loginBy
	case c.heartbeat:
		return time.Now().Add(s.cfg.IdleTimeout)
	}
	return time.Now().Add(s.cfg.Limits.MaxIdle)
}

// frameDeadline is when a frame whose first byte has arrived must be
// complete: IdleTimeout from now, for everyone. A client that sends one byte
// and stops (a slowloris) cannot hold a connection for ever.
func (s *Server) frameDeadline() time.Time {
	return time.Now().Add(s.cfg.IdleTimeout)
}

// heartbeat answers 130 with 131, and holds the connection to IdleTimeout
// from now on. It needs no session: a client may start its heartbeat before
// it logs in.
func (s *Server) heartbeat(c *conn, m proto.HeartbeatRequest) error {
	c.heartbeat = true
	s.reply(c, proto.HeartbeatResponse{RequestID: m.RequestID})
	return nil
}
