package chatcore

import (
	"errors"

	"serverlab/tools/given/chatcore/guard"
)

// errLastWords is why a reader ended whose connection was refused and
// finished by another path (too many failed logins): its last words are
// queued, and nothing it sends after them may act.
var errLastWords = errors.New("the connection's last words are queued")

// endConn ends c's connection once its writer has stopped. A writer that
// ended in order has written every frame, the last words too (Frame too
// large., Server busy., Too many failed logins…): the connection lingers
// (guard.Linger: half-close, wait for the reader, drain within a deadline
// and a byte cap) before it closes, because closing with the client's bytes
// unread sends a reset, and a reset destroys the answers the client has not
// read yet. A writer that failed, or a dropped client, is closed at once,
// and so is every connection while Close runs: it has ShutdownGrace to
// keep, and its readers stopped reading on purpose.
func (s *Server) endConn(c *conn, inOrder bool, readerDone <-chan struct{}) {
	if inOrder && !s.closing.Load() {
		guard.Linger(c.nc, readerDone)
	}
	c.nc.Close()
}

// finishing reports whether the outbox was finished: no more frames will
// be queued, and the writer ends once it has sent what it holds.
func (o *outbox) finishing() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.finished
}
