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
	// TODO(ex 7.6): Done when: a TCP connection has keep-alive on, probing
	// after s.cfg.KeepAlive of silence, every s.cfg.KeepAlive, and failing
	// after 4 unanswered probes; any other net.Conn is left as it is.
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
	// TODO(ex 7.6): Done when: the three cases above hold, c.user read under
	// s.mu (it changes under it; c.heartbeat is the reader goroutine's own,
	// as conn.go says, and this runs on the reader): the zero time means no
	// deadline. Checked by TestEx7_6_Liveness.
	return time.Time{}
}

// frameDeadline is when a frame whose first byte has arrived must be
// complete: IdleTimeout from now, for everyone. A client that sends one byte
// and stops (a slowloris) cannot hold a connection for ever.
func (s *Server) frameDeadline() time.Time {
	// TODO(ex 7.6): Done when: a started frame has IdleTimeout from now to
	// arrive whole, whoever sent it. Checked by TestEx7_6_Liveness.
	return time.Time{}
}

// heartbeat answers 130 with 131, and holds the connection to IdleTimeout
// from now on. It needs no session: a client may start its heartbeat before
// it logs in.
func (s *Server) heartbeat(c *conn, m proto.HeartbeatRequest) error {
	// TODO(ex 7.6): Done when: c is held to IdleTimeout between frames from now
	// on (c.heartbeat: the reader goroutine, which runs this, owns it; no lock)
	// and gets 131 with the request's id, with or without a session. Checked
	// by TestEx7_6_Liveness.
	return notImplemented("7.6", "Server.heartbeat")
}
