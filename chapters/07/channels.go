package chatcore

import (
	"serverlab/tools/given/chatcore/proto"
)

// createChannel creates a channel (107 → 108, then 129 to every open
// connection). A name that exists already returns the existing channel and
// tells nobody, as in the original: so a load tester that runs twice finds
// its channel again.
func (s *Server) createChannel(c *conn, m proto.CreateChannelRequest) error {
	// TODO(ex 7.3): Done when: without a session the answer is 100 "Not
	// authorized."; a name that exists is answered 108 with the existing
	// channel and no event; a new name is stored first (a database call:
	// without s.mu), then cached (s.channels, s.byName), answered 108 and
	// announced with 129 to every open connection, and only the request whose
	// store call really created it announces it, even when two clients create
	// one name at once. A new name past the server's limits (s.cfg.Limits.MaxChannels
	// in all, s.cfg.Limits.MaxChannelsPerUser created by this user, counted in
	// s.created, and its client address's share of the channels, kept by
	// s.channelShares, which checks MaxChannels too) is answered 100 "Too many
	// channels." and nothing is stored, also when many users create channels
	// at once: a new name is counted (s.creating, s.created, the address's
	// share) in the same hold of s.mu as the check, before the store call, and
	// given back after it if no channel came of it.
	// Checked by TestEx7_3_Channels.
	return notImplemented("7.3", "Server.createChannel")
}

// getChannels lists every channel in ascending id order (119 → 120).
func (s *Server) getChannels(c *conn, m proto.GetChannelsRequest) error {
	// TODO(ex 7.3): Done when: without a session the answer is 100 "Not
	// authorized."; otherwise 120 holds every channel once, in ascending id
	// order, whatever order the cache keeps them in, as many as fit in one
	// reply (stop before the items' itemCost passes replyRoom); the list is
	// copied under s.mu and the reply encoded after it is released. Checked
	// by TestEx7_3_Channels.
	return notImplemented("7.3", "Server.getChannels")
}

// getChannel looks a channel up by id (121 → 122).
func (s *Server) getChannel(c *conn, m proto.GetChannelRequest) error {
	// TODO(ex 7.3): Done when: without a session the answer is 100 "Not
	// authorized."; an unknown id is 100 "Channel not found."; a known one 122
	// with the channel. Checked by TestEx7_3_Channels.
	return notImplemented("7.3", "Server.getChannel")
}

// joinChannel moves the connection into a channel (117). In this order, as
// in the original: 127 to everyone in the channel it was in, itself
// included (also when it joins the channel it is in); 128 to everyone in the
// new channel, itself included; then 118 to it. A connection is in one
// channel at a time.
func (s *Server) joinChannel(c *conn, m proto.JoinChannelRequest) error {
	// TODO(ex 7.3): Done when, all within one hold of s.mu (so that nobody sees
	// the events out of order or a member in two channels): without a session
	// the answer is 100 "Not authorized."; an unknown channel is 100 "Channel
	// not found." and nothing moves; otherwise every member of c's old channel,
	// c included, was sent 127 while c was still in it (also when c rejoins the
	// channel it is in), c is a member of the new channel and of no other,
	// c.channel says which, every member of the new channel, c included, was
	// sent 128, and only then c got 118. Both events go through
	// broadcastPresenceLocked (a member whose presence budget is spent misses
	// them; c, whose move they announce, never does). Checked by
	// TestEx7_3_Channels.
	return notImplemented("7.3", "Server.joinChannel")
}
