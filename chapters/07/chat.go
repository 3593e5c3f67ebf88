package chatcore

import (
	"errors"

	"serverlab/tools/chatcore/proto"
	"serverlab/tools/lab"
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
	// TODO(ex 7.4): read c.user and c.channel under s.mu. No session: 101
	// MsgNotAuthorized; no channel: 101 MsgNoChannel. Encode the 103 now (too
	// large: 101 MsgFrameTooLarge), make an appendRequest (from: c) with a
	// done channel of capacity 1, send it on s.appends and wait on done; an
	// error there is errNotStored. Checked by TestEx7_4_History.
	return lab.NotImplemented("7.4", "Server.writeChat")
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
	// TODO(ex 7.4): for each first request received from s.appends (until it
	// is closed): s.gather more into a batch, s.commit it.
	// Checked by TestEx7_4_History.
}

// gather adds to batch what is waiting, and what arrives within the
// commit window.
func (s *Server) gather(batch []*appendRequest) []*appendRequest {
	// TODO(ex 7.4): take what is waiting in s.appends without blocking
	// (select with default), up to s.cfg.MaxBatch; with a CommitWindow, also
	// wait for more until a timer of that length fires. A closed s.appends
	// ends the batch. Checked by TestEx7_4_History (group-commit).
	return batch
}

// commit stores one batch, then sends each message to its channel and
// releases its sender.
func (s *Server) commit(batch []*appendRequest) {
	// TODO(ex 7.4): s.store.AppendMessages of the batch's messages, in one
	// call; on success call s.cfg.OnCommit (if set) and, under s.mu,
	// s.deliver each request (its frame to its channel). Only then send the
	// outcome on every request's done. Checked by TestEx7_4_History.
	for _, r := range batch {
		r.done <- lab.NotImplemented("7.4", "Server.commit")
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
	// TODO(ex 7.4): no session is MsgNotAuthorized; else s.store.History of
	// the channel, at most MaxHistory, and reply 106 with fitFrame(msgs).
	// Checked by TestEx7_4_History.
	return lab.NotImplemented("7.4", "Server.getChats")
}

// fitFrame drops the oldest messages until a response holding them fits in
// one frame, counting each message's JSON exactly (jsonLen) before anything
// is encoded. admit refuses a chat message too large to be the only one of
// a response, so the newest message always fits: one huge message cannot
// empty the history.
func fitFrame(msgs []proto.ChatMessage) []proto.ChatMessage {
	total := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		total += chatItemOverhead + jsonLen(msgs[i].Content)
		if total > replyRoom {
			return msgs[i+1:]
		}
	}
	return msgs
}

// chatItemOverhead is the JSON of one ChatMessage of a 106 without its
// content: keys, punctuation, the largest ids and the comma.
const chatItemOverhead = len(`{"content":"","id":4294967295,"user_id":4294967295},`)
