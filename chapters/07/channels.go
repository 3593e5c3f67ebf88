package chatcore

import (
	"serverlab/tools/chatcore/proto"
	"serverlab/tools/lab"
)

// createChannel creates a channel (107 → 108, then 129 to every open
// connection). A name that exists already returns the existing channel and
// tells nobody, as in the original: so a load tester that runs twice finds
// its channel again.
func (s *Server) createChannel(c *conn, m proto.CreateChannelRequest) error {
	// TODO(ex 7.3): no session is MsgNotAuthorized. A name in s.byName
	// answers 108 with that channel and no event. Else s.store.CreateChannel
	// (outside s.mu), then under s.mu s.addChannel, reply 108, and — only if
	// the store created it — broadcast 129 to s.conns.
	// Limits: a new name when len(s.channels) >= s.cfg.MaxChannels or
	// s.created[c.user.id] >= s.cfg.MaxChannelsPerUser is 100
	// MsgTooManyChannels; count each creation in s.created.
	// Checked by TestEx7_3_Channels.
	return lab.NotImplemented("7.3", "Server.createChannel")
}

// getChannels lists every channel in ascending id order (119 → 120).
func (s *Server) getChannels(c *conn, m proto.GetChannelsRequest) error {
	// TODO(ex 7.3): under s.mu: no session is MsgNotAuthorized; else 120
	// with every channel, sorted by id (slices.SortFunc, cmp.Compare).
	// Walk s.chanList (sorted) and stop before the items' itemCost passes
	// replyRoom; copy them under s.mu, reply after Unlock.
	// Checked by TestEx7_3_Channels.
	return lab.NotImplemented("7.3", "Server.getChannels")
}

// getChannel looks a channel up by id (121 → 122).
func (s *Server) getChannel(c *conn, m proto.GetChannelRequest) error {
	// TODO(ex 7.3): under s.mu: no session is MsgNotAuthorized; unknown id
	// is 100 MsgChannelNotFound; else 122.
	// Checked by TestEx7_3_Channels.
	return lab.NotImplemented("7.3", "Server.getChannel")
}

// joinChannel moves the connection into a channel (117). In this order, as
// in the original: 127 to everyone in the channel it was in, itself
// included (also when it joins the channel it is in); 128 to everyone in the
// new channel, itself included; then 118 to it. A connection is in one
// channel at a time.
func (s *Server) joinChannel(c *conn, m proto.JoinChannelRequest) error {
	// TODO(ex 7.3): under s.mu: no session is MsgNotAuthorized; unknown
	// channel MsgChannelNotFound. If c is in a channel, broadcast 127 to its
	// members (c included) and leave it; add c to s.members[id] (make the
	// set if needed), set c.channel, broadcast 128 to the new members (c
	// included), then reply 118.
	// Checked by TestEx7_3_Channels.
	return lab.NotImplemented("7.3", "Server.joinChannel")
}
