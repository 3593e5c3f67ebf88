package chatcore

import (
	"slices"

	"serverlab/tools/given/chatcore/proto"
)

// createChannel creates a channel (107 → 108, then 129 to every open
// connection). A name that exists already returns the existing channel and
// tells nobody, as in the original: so a load tester that runs twice finds
// its channel again.
func (s *Server) createChannel(c *conn, m proto.CreateChannelRequest) error {
	if s.session(c) == nil {
		s.notAuthorized(c, m.RequestID)
		return nil
	}
	// A new name is counted (s.creating, s.created, and its address's share
	// in s.channelShares, which checks MaxChannels too) in the same hold of
	// s.mu as the check, before the store call and without s.mu: requests
	// made at the same moment cannot all pass the caps. (Checked, then
	// created, 40 users at once made 236 channels of a cap of 200.)
	s.mu.Lock()
	id, exists := s.byName[m.Name]
	ch := s.channels[id]
	full := s.created[c.user.id] >= s.cfg.Limits.MaxChannelsPerUser ||
		!exists && !s.channelShares.Take(c.addr, len(s.channels)+s.creating)
	if !exists && !full {
		s.creating++
		s.created[c.user.id]++
	}
	s.mu.Unlock()
	if !exists && full {
		s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgTooManyChannels})
		return nil
	}
	created := false
	var err error
	if !exists {
		ch, created, err = s.store.CreateChannel(m.Name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !exists {
		s.creating--
		if !created {
			s.created[c.user.id]-- // the count made no channel
			s.channelShares.Give(c.addr)
		}
	}
	if err != nil {
		return err
	}
	s.addChannel(ch)
	s.reply(c, proto.CreateChannelResponse{RequestID: m.RequestID, Channel: ch})
	if created {
		s.broadcastLocked(s.conns, proto.ChannelCreateEvent{Channel: ch, UserID: c.user.id})
	}
	return nil
}

// getChannels lists the channels in ascending id order (119 → 120). The
// list is cut where its next item would not fit in one frame, so its cost
// is bounded before it is built, and the lock is held for at most one
// frame's worth of items; with the default limits (MaxChannels names of at
// most MaxChannelName bytes) every channel fits, and only a database from
// before the limits can have more.
func (s *Server) getChannels(c *conn, m proto.GetChannelsRequest) error {
	s.mu.Lock()
	if c.user == nil {
		s.mu.Unlock()
		s.notAuthorized(c, m.RequestID)
		return nil
	}
	n, size := 0, 0
	for _, ch := range s.chanList {
		if size += itemCost(ch.Name); size > replyRoom {
			break
		}
		n++
	}
	chs := slices.Clone(s.chanList[:n])
	all := len(s.chanList)
	s.mu.Unlock()
	if n < all {
		c.log.Warn("channel list cut to fit one frame", "sent", n, "channels", all)
	}
	s.reply(c, proto.GetChannelsResponse{RequestID: m.RequestID, Channels: chs})
	return nil
}

// getChannel looks a channel up by id (121 → 122).
func (s *Server) getChannel(c *conn, m proto.GetChannelRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.user == nil {
		s.notAuthorized(c, m.RequestID)
		return nil
	}
	ch, ok := s.channels[m.ChannelID]
	if !ok {
		s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgChannelNotFound})
		return nil
	}
	s.reply(c, proto.GetChannelResponse{RequestID: m.RequestID, Channel: ch})
	return nil
}

// joinChannel moves the connection into a channel (117). In this order, as
// in the original: 127 to everyone in the channel it was in, itself
// included (also when it joins the channel it is in); 128 to everyone in the
// new channel, itself included; then 118 to it. A connection is in one
// channel at a time.
func (s *Server) joinChannel(c *conn, m proto.JoinChannelRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.user == nil {
		s.notAuthorized(c, m.RequestID)
		return nil
	}
	if _, ok := s.channels[m.ChannelID]; !ok {
		s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgChannelNotFound})
		return nil
	}
	if old := c.channel; old != 0 {
		s.broadcastPresenceLocked(s.members[old], proto.ChannelLeaveEvent{ChannelID: old, UserID: c.user.id}, c)
		delete(s.members[old], c)
	}
	members := s.members[m.ChannelID]
	if members == nil {
		members = make(map[*conn]struct{})
		s.members[m.ChannelID] = members
	}
	members[c] = struct{}{}
	c.channel = m.ChannelID
	s.broadcastPresenceLocked(members, proto.ChannelJoinEvent{ChannelID: m.ChannelID, UserID: c.user.id}, c)
	s.reply(c, proto.JoinChannelResponse{RequestID: m.RequestID, ChannelID: m.ChannelID})
	return nil
}
