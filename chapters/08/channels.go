package chatscale

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"serverlab/tools/given/chatcore/proto"
)

// createChannel creates a channel (107 → 108, then 129 to everyone on
// every server). A name that exists returns the existing channel and
// tells nobody, as in chapter 07.
func (s *Server) createChannel(c *conn, m proto.CreateChannelRequest) error {
	u := s.session(c)
	if u.ID == 0 {
		s.notAuthorized(c, m.RequestID)
		return nil
	}
	if !proto.ValidName(m.Name, maxChannelName) {
		s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgInvalidName})
		return nil
	}
	ctx, cancel := s.requestContext()
	defer cancel()
	// One creation at a time on this server, each counting the bucket's
	// channels first: the channels the other servers made are counted
	// before this server has heard of them, and all that one count can miss
	// is the creation each other server has in flight (reserveChannel).
	select {
	case s.creating <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	stored, err := s.storedChannels(ctx)
	if err != nil {
		<-s.creating
		return err
	}
	ok, shared := s.reserveChannel(u.ID, c.addr, m.Name, stored)
	if !ok {
		<-s.creating
		s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgTooManyChannels})
		return nil
	}
	id, created, err := s.createChannelKey(ctx, m.Name)
	<-s.creating
	s.mu.Lock()
	s.reserved--
	if err != nil || !created {
		if s.created[u.ID] > 0 {
			s.created[u.ID]-- // the reservation made no channel (unless forgetUsers forgot it)
		}
		if shared {
			s.channelShares.Give(c.addr)
		}
	}
	if err != nil {
		s.mu.Unlock()
		return err
	}
	ch := proto.Channel{ID: id, Name: m.Name}
	s.addChannelLocked(ch)
	s.reply(c, proto.CreateChannelResponse{RequestID: m.RequestID, Channel: ch})
	var ev = s.noEvent()
	if created {
		ev = s.eventLocked(0, proto.ChannelCreateEvent{Channel: ch, UserID: u.ID})
	}
	s.mu.Unlock()
	s.publishEvent(ev)
	return nil
}

// reserveChannel reports whether a channel named name may be made by user,
// and if so counts it, for the server, for the user and (a name new to this
// server: shared) for addr, before it is made
// (createChannel gives the count back if no channel came of it): requests
// made at the same moment cannot all pass the cap. A new name may be made
// while the channels there are — the more of stored (the bucket's count, read
// just before) and those this server knows — with those being made, are
// fewer than MaxChannels, the user has made fewer than MaxChannelsPerUser
// here since the start, and the client's address is within its share
// (MaxChannelsPerAddress, and the reserve of guard.Shares: registering is
// free, so a cap per user alone let 65 users of one address make all 4,096
// channels of chapter 07 in 5 s, for good). Without the cap, 15,007 channels
// made in 11 s made the list larger than a frame, and GetChannels went
// unanswered for everyone. Its one slack: each other server may have one
// creation in flight that stored does not count yet, so n servers together
// make at most MaxChannels+n-1. (Counting only the channels this server
// knew of, two servers with a cap of 100 made 137: each learns of the
// other's channels late.)
func (s *Server) reserveChannel(user uint32, addr, name string, stored int) (ok, shared bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, exists := s.byName[name]
	if !exists && (s.created[user] >= s.cfg.Limits.MaxChannelsPerUser ||
		!s.channelShares.Take(addr, max(len(s.channels), stored)+s.reserved)) {
		return false, false
	}
	s.reserved++
	s.created[user]++
	return true, !exists
}

// storedChannels counts the channels of the bucket, on every server: its
// keys, each written once (a channel is never renamed or deleted).
func (s *Server) storedChannels(ctx context.Context) (int, error) {
	st, err := s.nats.channels.Status(ctx)
	if err != nil {
		return 0, err
	}
	return int(st.Values()), nil
}

// channelCost is the most bytes ch takes in a list: its JSON (as
// encoding/json writes it, which escapes at least as much as the codec)
// and a comma. A list may take replyRoom of a frame, as history's
// messages.
func channelCost(ch proto.Channel) int {
	b, _ := json.Marshal(ch)
	return len(b) + 1
}

// getChannels lists the channels in ascending id order (119 → 120), as
// this server knows them: a channel created on another server a moment
// ago may be missing for as long as the bucket's news takes to arrive.
// The list stops at one frame's worth (with MaxChannels it always fits;
// a bucket filled before the cap existed may not): an answer that is cut
// is still an answer.
func (s *Server) getChannels(c *conn, m proto.GetChannelsRequest) error {
	s.mu.Lock()
	if c.user.ID == 0 {
		s.mu.Unlock()
		s.notAuthorized(c, m.RequestID)
		return nil
	}
	chs := make([]proto.Channel, 0, len(s.channels))
	for _, ch := range s.channels {
		chs = append(chs, ch)
	}
	s.mu.Unlock()
	slices.SortFunc(chs, func(a, b proto.Channel) int { return cmp.Compare(a.ID, b.ID) })
	size := 0
	for i, ch := range chs {
		if size += channelCost(ch); size > replyRoom {
			c.log.Warn("channel list cut to fit one frame", "sent", i, "channels", len(chs))
			chs = chs[:i]
			break
		}
	}
	s.reply(c, proto.GetChannelsResponse{RequestID: m.RequestID, Channels: chs})
	return nil
}

// getChannel looks a channel up by id (121 → 122).
func (s *Server) getChannel(c *conn, m proto.GetChannelRequest) error {
	if s.session(c).ID == 0 {
		s.notAuthorized(c, m.RequestID)
		return nil
	}
	ch, err := s.channelByID(m.ChannelID)
	if errors.Is(err, errNotFound) {
		s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgChannelNotFound})
		return nil
	}
	if err != nil {
		return err
	}
	s.reply(c, proto.GetChannelResponse{RequestID: m.RequestID, Channel: ch})
	return nil
}

// joinChannel moves the connection into a channel (117): 127 to the old
// channel's members, 128 to the new one's (on every server), then 118.
func (s *Server) joinChannel(c *conn, m proto.JoinChannelRequest) error {
	if s.session(c).ID == 0 {
		s.notAuthorized(c, m.RequestID)
		return nil
	}
	if _, err := s.channelByID(m.ChannelID); errors.Is(err, errNotFound) {
		s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgChannelNotFound})
		return nil
	} else if err != nil {
		return err
	}
	s.mu.Lock()
	if c.user.ID == 0 { // logged out meanwhile: cannot happen, one reader
		s.mu.Unlock()
		return nil
	}
	left := s.noEvent()
	if old := c.channel; old != 0 {
		left = s.eventLocked(old, proto.ChannelLeaveEvent{ChannelID: old, UserID: c.user.ID})
		delete(s.members[old], c)
	}
	members := s.members[m.ChannelID]
	if members == nil {
		members = make(map[*conn]struct{})
		s.members[m.ChannelID] = members
	}
	members[c] = struct{}{}
	c.channel = m.ChannelID
	joined := s.eventLocked(m.ChannelID, proto.ChannelJoinEvent{ChannelID: m.ChannelID, UserID: c.user.ID})
	s.reply(c, proto.JoinChannelResponse{RequestID: m.RequestID, ChannelID: m.ChannelID})
	s.mu.Unlock()
	s.publishEvent(left)
	s.publishEvent(joined)
	return nil
}

// channelByID finds a channel: in the cache, or else as the revision of
// the channels bucket that created it (the watcher may not have told us
// yet about a channel created elsewhere a moment ago).
func (s *Server) channelByID(id uint32) (proto.Channel, error) {
	s.mu.Lock()
	ch, ok := s.channels[id]
	s.mu.Unlock()
	if ok {
		return ch, nil
	}
	ctx, cancel := s.requestContext()
	defer cancel()
	name, err := s.nameAt(ctx, channelsBucket, id)
	if err != nil {
		return proto.Channel{}, err
	}
	ch = proto.Channel{ID: id, Name: name}
	s.mu.Lock()
	s.addChannelLocked(ch)
	s.mu.Unlock()
	return ch, nil
}

// addChannelLocked puts a channel into the cache. The caller holds s.mu.
func (s *Server) addChannelLocked(ch proto.Channel) {
	s.channels[ch.ID] = ch
	s.byName[ch.Name] = ch.ID
}

// loadChannels reads every channel into the cache and starts the watcher
// that keeps it up to date (watchChannels).
func (s *Server) loadChannels() error {
	ctx, cancel := context.WithTimeout(s.ctx, setUpTimeout)
	defer cancel()
	w, err := s.nats.channels.WatchAll(s.ctx)
	if err != nil {
		return fmt.Errorf("watch the channels: %w", err)
	}
	s.channelWatch = w
	for {
		select {
		case e := <-w.Updates():
			if e == nil { // every channel that exists has come
				return nil
			}
			s.noteChannel(e)
		case <-ctx.Done():
			w.Stop()
			return fmt.Errorf("load the channels: %w", ctx.Err())
		}
	}
}

// watchChannels is the watcher's goroutine: each channel created on any
// server comes into the cache. Told to (rewatch: the store was wiped and
// forgetUsers emptied the cache), it stops its watcher and watches the
// bucket anew, from its first key: the new bucket's channels come in.
func (s *Server) watchChannels() {
	w := s.channelWatch
	defer func() {
		if w != nil {
			w.Stop()
		}
	}()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.rewatch:
			w.Stop()
			if w = s.watchAgain(); w == nil {
				return
			}
		case e, ok := <-w.Updates():
			if !ok {
				return
			}
			if e != nil {
				s.noteChannel(e)
			}
		}
	}
}

// watchAgain watches the channels bucket anew, trying every retryWait
// until it can; nil once the server closes (its watcher stopped).
func (s *Server) watchAgain() jetstream.KeyWatcher {
	for {
		w, err := s.nats.channels.WatchAll(s.ctx)
		if err == nil {
			return w
		}
		s.log.Warn("watching the channels again", "err", err)
		select {
		case <-s.ctx.Done():
			return nil
		case <-time.After(retryWait):
		}
	}
}

// noteChannel caches the channel of a bucket entry.
func (s *Server) noteChannel(e jetstream.KeyValueEntry) {
	if e.Operation() != jetstream.KeyValuePut {
		return
	}
	name, err := nameOfKey(e.Key())
	if err != nil {
		return
	}
	s.mu.Lock()
	s.addChannelLocked(proto.Channel{ID: uint32(e.Revision()), Name: name})
	s.mu.Unlock()
}
