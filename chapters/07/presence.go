package chatcore

import (
	"time"

	"serverlab/tools/given/chatcore/proto"
)

// Presence events (126 login, 125 logout, 128 join, 127 leave) say who comes
// and goes. Each costs a frame per receiver: a login goes to every open
// connection, so N clients logging in and out, or hopping between channels,
// make N frames per request and N² in all. Unbounded, such a storm moved
// 260–569 MB of events in 15 s and slowed every honest client's chat.
//
// So every connection has a presence budget (guard.Presence, which chapter
// 08 uses too), a token bucket: PresenceBurst events at once, refilled at
// PresenceRate a second (defaults 100 and 20).
// A presence event that finds its receiver's bucket empty is not sent to
// that receiver; nothing else changes (the connection stays, its other
// frames are sent). Two kinds are never dropped: events about the receiver's
// own session (its own login, logout, join or leave), which its client acts
// on, and everything that is not presence (replies, chat messages, channel
// creations, notices). A client that needs the full picture after a storm
// asks for it. This is what large chat services do with presence: IRC
// networks hide joins and parts in large channels, Twitch stops sending them
// past 1000 members, Centrifugo makes them opt-in per namespace.

// broadcastPresenceLocked sends the presence event m to every connection in
// to whose budget allows it, and always to self, the connection whose
// session or channel the event is about. The caller holds s.mu, as for
// broadcastLocked. The first event dropped for a connection is logged.
func (s *Server) broadcastPresenceLocked(to map[*conn]struct{}, m proto.Message, self *conn) {
	b, err := proto.Encode(m)
	if err != nil {
		s.log.Error("cannot encode a broadcast", "type", m.Type(), "err", err)
		return
	}
	now := time.Now()
	for c := range to {
		if c == self || c.presence.Take(now, s.cfg.Limits.PresenceRate, s.cfg.Limits.PresenceBurst) {
			s.send(c, b)
		} else if c.presence.Dropped() == 1 {
			c.log.Info("presence events over the connection's budget are not sent to it",
				"burst", s.cfg.Limits.PresenceBurst, "per_second", s.cfg.Limits.PresenceRate)
		}
	}
}
