package chatcore

import (
	"errors"
	"time"

	"serverlab/tools/given/chatcore/guard"
	"serverlab/tools/given/chatcore/proto"
)

// History limits: GetChats returns at most MaxHistory messages, and never a
// response over 1 MiB (a client drops a larger frame): the oldest are left
// out. The original had neither limit.
const MaxHistory = 1000

// appendRequest is one chat message on its way through the committer.
type appendRequest struct {
	from  *conn // the sender, who gets its echo first
	msg   NewMessage
	frame []byte     // the encoded 103, sent to the channel after the commit
	done  chan error // the commit's outcome, once
}

// errNotStored is the answer to a chat message whose transaction failed.
//
//lint:ignore ST1005 the protocol's verbatim error text, sent to the client as it is
var errNotStored = errors.New("Message not stored.")

// writeChat stores a chat message and then sends it to every connection in
// the sender's channel, the sender included (104 → 103). The reader waits for
// the commit, so a connection has one message in flight at a time: that is
// its back-pressure, and it is fair — every batch takes at most one message
// from each connection, so a flooding client cannot crowd the others out.
func (s *Server) writeChat(c *conn, m proto.WriteChat) error {
	s.mu.Lock()
	u, ch := c.user, c.channel
	s.mu.Unlock()
	switch {
	case u == nil:
		s.reply(c, proto.Error{Value: proto.MsgNotAuthorized})
		return nil
	case ch == 0:
		s.reply(c, proto.Error{Value: proto.MsgNoChannel})
		return nil
	}
	frame, err := proto.Encode(proto.ReceiveChat{ChannelID: ch, Content: m.Content, UserID: u.id})
	if err != nil { // content too close to 1 MiB for the 103 to fit
		s.reply(c, proto.Error{Value: proto.MsgFrameTooLarge})
		return nil
	}
	req := &appendRequest{from: c, msg: NewMessage{Channel: ch, User: u.id, Content: m.Content}, frame: frame, done: make(chan error, 1)}
	s.appends <- req
	if err := <-req.done; err != nil {
		c.log.Error("storing a message", "err", err)
		return errNotStored
	}
	return nil
}

// commitLoop is the committer goroutine: group commit. It takes the first
// waiting message, gathers every other one already waiting (and, with a
// CommitWindow, those that arrive within it), up to MaxBatch, stores them in
// one transaction, and only then delivers them. While it commits, new
// messages queue up for the next batch: the busier the server, the bigger
// the batches, and one fsync pays for all of them.
//
// It returns when Close closes s.appends, after the last batch.
func (s *Server) commitLoop() {
	defer close(s.committed)
	batch := make([]*appendRequest, 0, s.cfg.MaxBatch)
	for first := range s.appends {
		batch = s.gather(append(batch[:0], first))
		s.commit(batch)
		clear(batch)
	}
}

// gather adds to batch what is waiting, and what arrives within the
// commit window.
func (s *Server) gather(batch []*appendRequest) []*appendRequest {
	var window <-chan time.Time
	if s.cfg.CommitWindow > 0 {
		t := time.NewTimer(s.cfg.CommitWindow)
		defer t.Stop()
		window = t.C
	}
	for len(batch) < s.cfg.MaxBatch {
		select {
		case r, ok := <-s.appends:
			if !ok {
				return batch
			}
			batch = append(batch, r)
			continue
		default:
		}
		if window == nil {
			return batch
		}
		select {
		case r, ok := <-s.appends:
			if !ok {
				return batch
			}
			batch = append(batch, r)
		case <-window:
			return batch
		}
	}
	return batch
}

// commit stores one batch, then sends each message to its channel and
// releases its sender.
func (s *Server) commit(batch []*appendRequest) {
	msgs := make([]NewMessage, len(batch))
	for i, r := range batch {
		msgs[i] = r.msg
	}
	_, err := s.store.AppendMessages(msgs)
	if err == nil && s.cfg.Hooks.OnCommit != nil {
		s.cfg.Hooks.OnCommit(len(batch))
	}
	if err == nil {
		s.mu.Lock()
		for _, r := range batch {
			s.deliver(r)
		}
		s.mu.Unlock()
	}
	for _, r := range batch {
		r.done <- err
	}
}

// deliver sends a committed message to every connection in its channel,
// its sender first. The sender's echo is its acknowledgement — "your message
// is stored" — and the one copy somebody is waiting for: pushed first, it is
// the first writer woken, so it does not wait behind the other N−1 copies
// of the fan-out (with 450 members, those take a millisecond or more). The
// caller holds s.mu. A sender that left the channel (or logged out) while
// its message was committing gets no echo, as any other non-member.
func (s *Server) deliver(r *appendRequest) {
	members := s.members[r.msg.Channel]
	if _, ok := members[r.from]; ok {
		s.send(r.from, r.frame)
	}
	for c := range members {
		if c != r.from {
			s.send(c, r.frame)
		}
	}
}

// getChats returns the newest limit messages of a channel, oldest first
// (105 → 106). Like the original it checks neither membership nor that the
// channel exists (an unknown one has no messages).
func (s *Server) getChats(c *conn, m proto.GetChatsRequest) error {
	if s.session(c) == nil {
		s.notAuthorized(c, m.RequestID)
		return nil
	}
	msgs, err := s.store.History(m.ChannelID, int(min(m.Limit, MaxHistory)))
	if err != nil {
		return err
	}
	s.reply(c, proto.GetChatsResponse{RequestID: m.RequestID, ChannelID: m.ChannelID, Messages: fitFrame(msgs)})
	return nil
}

// fitFrame drops the oldest messages until a response holding them fits in
// one frame, counting each message's JSON exactly (guard.JSONLen) before anything
// is encoded. admit refuses a chat message too large to be the only one of
// a response, so the newest message always fits: one huge message cannot
// empty the history.
func fitFrame(msgs []proto.ChatMessage) []proto.ChatMessage {
	total := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		total += chatItemOverhead + guard.JSONLen(msgs[i].Content)
		if total > replyRoom {
			return msgs[i+1:]
		}
	}
	return msgs
}

// chatItemOverhead is the JSON of one ChatMessage of a 106 without its
// content: keys, punctuation, the largest ids and the comma.
const chatItemOverhead = len(`{"content":"","id":4294967295,"user_id":4294967295},`)
