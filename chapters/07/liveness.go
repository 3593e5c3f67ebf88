package chatcore

import (
	"net"
	"time"

	"serverlab/tools/chatcore/proto"
	"serverlab/tools/lab"
)

// keepAlive turns on TCP keep-alive: after KeepAlive of silence the kernel
// probes the peer, every KeepAlive, and after four unanswered probes the
// connection fails. It finds the clients that vanished without a FIN or RST
// (a crashed machine, a pulled cable) — the original kept those logged in
// until it restarted.
func (s *Server) keepAlive(nc net.Conn) {
	// TODO(ex 7.6): if nc is a *net.TCPConn, SetKeepAliveConfig with
	// Enable, Idle and Interval s.cfg.KeepAlive, Count 4.
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
	// TODO(ex 7.6): the three cases above. Checked by TestEx7_6_Liveness.
	return time.Time{}
}

// frameDeadline is when a frame whose first byte has arrived must be
// complete: IdleTimeout from now, for everyone. A client that sends one byte
// and stops (a slowloris) cannot hold a connection for ever.
func (s *Server) frameDeadline() time.Time {
	// TODO(ex 7.6): IdleTimeout from now. Checked by TestEx7_6_Liveness.
	return time.Time{}
}

// heartbeat answers 130 with 131, and holds the connection to IdleTimeout
// from now on. It needs no session: a client may start its heartbeat before
// it logs in.
func (s *Server) heartbeat(c *conn, m proto.HeartbeatRequest) error {
	// TODO(ex 7.6): set c.heartbeat and reply 131 with the request id.
	// Checked by TestEx7_6_Liveness.
	return lab.NotImplemented("7.6", "Server.heartbeat")
}
