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
	b, err := wire.Encode(wire.Frame{Type: wire.Broadcast, Sender: from.name, Target: f.Target, Payload: f.Payload})
	if err != nil {
		s.log.Error("encoding a broadcast", "err", err) // cannot happen: names and payload were checked when read
		return
	}
	for _, c := range s.others(from) {
		s.send(c, b)
	}
}

// others returns the logged-in clients other than c.
func (s *Server) others(c *client) []*client {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := make([]*client, 0, len(s.online))
	for _, o := range s.online {
		if o != c {
			list = append(list, o)
		}
	}
	return list
}

// private delivers f to the client named in its target, with the sender's
// authenticated name; if nobody of that name is online, the sender is told
// so.
func (s *Server) private(from *client, f wire.Frame) {
	s.mu.Lock()
	to, ok := s.online[f.Target]
	s.mu.Unlock()
	if !ok {
		s.reply(from, wire.PrivateMsg, []byte(notOnline))
		return
	}
	b, err := wire.Encode(wire.Frame{Type: wire.PrivateMsg, Sender: from.name, Target: f.Target, Payload: f.Payload})
	if err != nil {
		s.log.Error("encoding a private message", "err", err)
		return
	}
	s.send(to, b)
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
	if err := s.users.Refresh(0); err != nil {
		s.log.Error("reading the users file", "err", err) // list what was read before
	}
	s.mu.Lock()
	online := make(map[string]bool, len(s.online))
	for name := range s.online {
		online[name] = true
	}
	s.mu.Unlock()
	s.reply(c, wire.QueryUser, wire.UserList(s.users.Names(), func(name string) bool { return online[name] }))
}
