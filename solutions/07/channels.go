package chatcore

import (
	"cmp"
	"slices"

	"serverlab/tools/chatcore/proto"
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
	s.mu.Lock()
	id, exists := s.byName[m.Name]
	ch := s.channels[id]
	s.mu.Unlock()
	created := false
	if !exists {
		var err error
		if ch, created, err = s.store.CreateChannel(m.Name); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addChannel(ch)
	s.reply(c, proto.CreateChannelResponse{RequestID: m.RequestID, Channel: ch})
	if created {
		s.broadcastLocked(s.conns, proto.ChannelCreateEvent{Channel: ch, UserID: c.user.id})
	}
	return nil
}

// getChannels lists every channel in ascending id order (119 → 120).
func (s *Server) getChannels(c *conn, m proto.GetChannelsRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.user == nil {
		s.notAuthorized(c, m.RequestID)
		return nil
	}
	chs := make([]proto.Channel, 0, len(s.channels))
	for _, ch := range s.channels {
		chs = append(chs, ch)
	}
	slices.SortFunc(chs, func(a, b proto.Channel) int { return cmp.Compare(a.ID, b.ID) })
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
		s.broadcastLocked(s.members[old], proto.ChannelLeaveEvent{ChannelID: old, UserID: c.user.id})
		delete(s.members[old], c)
	}
	members := s.members[m.ChannelID]
	if members == nil {
		members = make(map[*conn]struct{})
		s.members[m.ChannelID] = members
	}
	members[c] = struct{}{}
	c.channel = m.ChannelID
	s.broadcastLocked(members, proto.ChannelJoinEvent{ChannelID: m.ChannelID, UserID: c.user.id})
	s.reply(c, proto.JoinChannelResponse{RequestID: m.RequestID, ChannelID: m.ChannelID})
	return nil
}
