package chat

import (
	"serverlab/tools/wire"
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
	// TODO(ex 2.2): encode ONE frame with wire.Encode: type BROADCAST, sender
	// from.name (never f.Sender: clients lie), target f.Target (relayed as the
	// client wrote it), payload f.Payload. Copy the other clients with
	// s.others(from) (under s.mu); then s.send the frame to each, outside the
	// lock. Checked by TestEx2_2_Broadcast.
}

// others returns the logged-in clients other than c.
func (s *Server) others(c *client) []*client {
	// TODO(ex 2.2): under s.mu, copy the clients of s.online other than c
	// into a new slice. Checked by TestEx2_2_Broadcast.
	return nil
}

// private delivers f to the client named in its target, with the sender's
// authenticated name; if nobody of that name is online, the sender is told
// so.
func (s *Server) private(from *client, f wire.Frame) {
	// TODO(ex 2.3): look f.Target up in s.online (under s.mu). Not there:
	// s.reply(from, wire.PrivateMsg, []byte(notOnline)). Otherwise encode a
	// PRIVATE_MSG with sender from.name, target f.Target and payload
	// f.Payload, and s.send it to the receiver. Checked by
	// TestEx2_3_PrivateMessage.
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
	// TODO(ex 2.4): s.users.Refresh(0) (on an error, log it and list what
	// the cache holds); copy the names in s.online into a set under s.mu;
	// s.reply(c, wire.QueryUser, wire.UserList(s.users.Names(), …)), a name
	// being active when it is in the set. Checked by TestEx2_4_UserQuery.
}
