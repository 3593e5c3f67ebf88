package chatscale

import (
	"context"
	"encoding/json"

	"serverlab/tools/given/chatcore/proto"
)

// MaxHistory bounds the messages of one GetChats reply, as in chapter 07.
const MaxHistory = 1000

// getChats returns the newest limit messages of a channel, oldest first
// (105 → 106), read from the stream: every server answers the same, also
// one that started a moment ago or lost its disk.
func (s *Server) getChats(c *conn, m proto.GetChatsRequest) error {
	if s.session(c).ID == 0 {
		s.notAuthorized(c, m.RequestID)
		return nil
	}
	ctx, cancel := s.requestContext()
	defer cancel()
	msgs, err := s.history(ctx, m.ChannelID, int(min(m.Limit, MaxHistory)))
	if err != nil {
		return err
	}
	s.reply(c, proto.GetChatsResponse{RequestID: m.RequestID, ChannelID: m.ChannelID, Messages: fitFrame(msgs)})
	return nil
}

// historyGate lets a GetChats through to getChats only if the server can
// afford its answer, as chapter 07's does: a history is up to a 1 MiB
// frame, read from the stream and then queued for a client that may never
// read it. It is answered Server busy. at once, without reading the
// stream, when guard.Reads says so: Limits.HistoryReads GetChats are
// being read already, or the half of the output budget that large replies
// may use is spent.
func (s *Server) historyGate(c *conn, m proto.GetChatsRequest) error {
	done, ok := s.historyReads.Enter()
	if !ok {
		s.busy(c, m)
		return nil
	}
	defer done()
	return s.getChats(c, m)
}

// history reads the newest limit messages of channel ch from the stream,
// oldest first, in a number of requests that grows with limit, not with
// the channel: JetStream cannot read one subject backwards, but it counts
// a subject's messages from any sequence on (countFrom), so a binary
// search finds the sequence from which the channel holds limit messages,
// and one batch reads them (readFrom). No consumer is made: a flood of
// GetChats leaves nothing behind in NATS.
func (s *Server) history(ctx context.Context, ch uint32, limit int) ([]proto.ChatMessage, error) {
	// TODO(ex 8.3): Done when: the answer is the newest limit messages of
	// channel ch in the stream (subject msgSubject + ch), oldest first, each
	// with its stream sequence as its id, its user and its content; an empty
	// (non-nil) slice when limit is 0 or the channel has no message; any
	// failure of NATS is an error (never an empty history). Its cost grows
	// with limit, not with the channel (a channel of a million messages is
	// read in milliseconds), and it leaves no consumer behind: decide where
	// reading starts and where it stops before you read (the lesson's primer,
	// step 3: what a batch waits for; the helpers in natslink.go count a
	// channel's messages from a position). A read that ends before the
	// channel's last sequence met a replica behind the leader: try again
	// after retryWait, until ctx ends. Checked by TestEx8_3_History.
	return nil, notImplemented("8.3", "Server.history")
}

// replyRoom is what the messages of one reply may take (1 MiB less room
// for the rest of the 106).
const replyRoom = proto.MaxFrame - 256

// fitFrame drops the oldest messages until a reply holding them fits in
// one frame.
func fitFrame(msgs []proto.ChatMessage) []proto.ChatMessage {
	total := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		b, _ := json.Marshal(msgs[i])
		if total += len(b) + 1; total > replyRoom {
			return msgs[i+1:]
		}
	}
	return msgs
}
