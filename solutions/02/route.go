package chat

import (
	"bytes"
	"slices"
	"strings"

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
	b, err := wire.Encode(wire.Frame{Type: wire.Broadcast, Sender: from.name, Target: everyone, Payload: f.Payload})
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

// private delivers f's payload to the client named in its target, with the
// target rewritten to the receiver's name; if nobody of that name is online,
// the sender is told so.
func (s *Server) private(from *client, f wire.Frame) {
	s.mu.Lock()
	to, ok := s.online[f.Target]
	s.mu.Unlock()
	if !ok {
		s.reply(from, wire.PrivateMsg, []byte(notOnline))
		return
	}
	b, err := wire.Encode(wire.Frame{Type: wire.PrivateMsg, Sender: from.name, Target: to.name, Payload: f.Payload})
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
// with whether they are online now. The users file is read again, like at
// login, so that the list includes users registered since the server started.
func (s *Server) queryUsers(c *client) {
	f, err := users.Load(s.cfg.UsersPath)
	if err != nil {
		// Load returns the users it read before the damage: list those.
		s.log.Error("reading the users file", "err", err)
	}
	s.mu.Lock()
	online := make(map[string]bool, len(s.online))
	for name := range s.online {
		online[name] = true
	}
	s.mu.Unlock()
	s.reply(c, wire.QueryUser, userList(f.Users, online))
}

// userList formats the QUERY_USER payload: one line per registered user,
// sorted by name, "<name> | active: <0|1>\n"; "(no users registered)" (no
// newline) when there are none. A name listed twice in the file is listed
// once. A list longer than a frame can carry is cut after the last whole line
// that fits.
func userList(registered []users.User, online map[string]bool) []byte {
	names := make([]string, 0, len(registered))
	for name := range users.Index(registered) {
		names = append(names, name)
	}
	if len(names) == 0 {
		return []byte(noUsers)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, name := range names {
		active := "0"
		if online[name] {
			active = "1"
		}
		b.WriteString(name + " | active: " + active + "\n")
	}
	out := []byte(b.String())
	if len(out) > wire.MaxPayload {
		out = out[:bytes.LastIndexByte(out[:wire.MaxPayload], '\n')+1]
	}
	return out
}
