package chat

import (
	"serverlab/tools/users"
	"serverlab/tools/wire"
)

// everyone is the target of every relayed BROADCAST. The server writes every
// header it relays itself, from what it knows: the sender is the name the
// client logged in with, never the one it put in its frame.
const everyone = wire.Everyone

// Payloads of the server's own replies.
const (
	notOnline = "User not online."
	noUsers   = "(no users registered)"
)

// broadcast relays f's payload to every other logged-in client.
//
// The lock is held only to copy the list of receivers; the frame is encoded
// once, outside it, and queued to each receiver, which never blocks.
func (s *Server) broadcast(from *client, f wire.Frame) {
	// TODO(ex 2.2): encode ONE frame with wire.Encode: type BROADCAST, sender
	// from.name (never f.Sender: clients lie), target everyone, payload
	// f.Payload. Under s.mu copy the other clients of s.online into a slice;
	// release the lock; then s.send the frame to each. Checked by
	// TestEx2_2_Broadcast.
}

// private delivers f's payload to the client named in its target, with the
// target rewritten to the receiver's name; if nobody of that name is online,
// the sender is told so.
func (s *Server) private(from *client, f wire.Frame) {
	// TODO(ex 2.3): look f.Target up in s.online (under s.mu). Not there:
	// s.reply(from, wire.PrivateMsg, []byte(notOnline)). Otherwise encode a
	// PRIVATE_MSG with sender from.name, target the receiver's name and
	// payload f.Payload, and s.send it to the receiver. Checked by
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
// with whether they are online now. The users file is read again, like at
// login, so that the list includes users registered since the server started.
func (s *Server) queryUsers(c *client) {
	// TODO(ex 2.4): users.Load(s.cfg.UsersPath) (on an error, log it and list
	// the users it did read); copy the names in s.online into a set under
	// s.mu; s.reply(c, wire.QueryUser, userList(…)). Checked by
	// TestEx2_4_UserQuery.
}

// userList formats the QUERY_USER payload: one line per registered user,
// sorted by name, "<name> | active: <0|1>\n"; "(no users registered)" (no
// newline) when there are none. A name listed twice in the file is listed
// once. A list longer than a frame can carry is cut after the last whole line
// that fits.
func userList(registered []users.User, online map[string]bool) []byte {
	// TODO(ex 2.4): the names of users.Index(registered), sorted; one line
	// per name, name + " | active: " + "1" or "0" + "\n"; noUsers if there
	// are none; if the result is longer than wire.MaxPayload, cut it after
	// the last '\n' that fits. Checked by TestEx2_4_UserQuery.
	return nil
}
