package chat

import (
	"serverlab/tools/given/wire"
)

// Payloads of the server's own replies.
const (
	notOnline = wire.NotOnline
)

// broadcast relays f to every other logged-in client: its header as the
// client wrote it (a target of "ALL" or "all" stays as it is, as in the
// original), except the sender, which is the name the client logged in with,
// never the one it put in its frame.
//
// The lock is held only to copy the list of receivers; the frame is encoded
// once, outside it, and queued to each receiver.
func (s *Server) broadcast(from *client, f wire.Frame) {
	// TODO(ex 2.2): Done when: every other online client gets one BROADCAST
	// whose sender is the name from's login proved (never the frame's own
	// sender field: clients lie), with the target and payload as the client
	// wrote them, encoded once for all; the list of clients is copied under
	// s.mu and the sends happen outside it, so that one slow client delays
	// nobody else's delivery. Checked by TestEx2_2_Broadcast.
}

// others returns the logged-in clients other than c.
func (s *Server) others(c *client) []*client {
	// TODO(ex 2.2): Done when: it returns a new slice of every online client
	// but c, copied under s.mu. Checked by TestEx2_2_Broadcast.
	return nil
}

// private delivers f to the client named in its target, with the sender's
// authenticated name; if nobody of that name is online, the sender is told
// so.
func (s *Server) private(from *client, f wire.Frame) {
	// TODO(ex 2.3): Done when: an online target gets one PRIVATE_MSG from the
	// sender's login name with the payload as written; an offline or unknown
	// target means the sender gets the not-online reply instead. The lookup is
	// under s.mu, the send outside it. Checked by TestEx2_3_PrivateMessage.
}

// reply queues a frame from the server to c.
func (s *Server) reply(c *client, typ wire.Type, payload []byte) {
	b, err := wire.Encode(wire.Frame{Type: typ, Sender: wire.ServerName, Target: c.name, Payload: payload})
	if err != nil {
		s.log.Error("encoding a reply", "err", err)
		return
	}
	s.send(c, b)
}

// queryUsers answers a QUERY_USER: every registered user, sorted by name,
// with whether they are online now (wire.UserList has the format). The users
// file is refreshed first, as at login, so that the list includes users
// registered since the server started.
func (s *Server) queryUsers(c *client) {
	// TODO(ex 2.4): Done when: the asker gets one QUERY_USER reply listing
	// every user of the file as it is now (re-read; on an error, logged, and
	// what the cache holds), each marked active exactly when it is online, the
	// online set copied under s.mu. Checked by TestEx2_4_UserQuery.
}
