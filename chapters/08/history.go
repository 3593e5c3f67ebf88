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

// historyBatch is how many messages one fetch of history asks for.
const historyBatch = 256

// history reads the newest limit messages of channel ch from the stream,
// oldest first. JetStream cannot read one subject backwards, so it finds
// the channel's last sequence, reads the subject forwards up to it with
// an ordered consumer of its own, and keeps the last limit messages.
func (s *Server) history(ctx context.Context, ch uint32, limit int) ([]proto.ChatMessage, error) {
	// TODO(ex 8.3): Done when: the answer is the newest limit messages of
	// channel ch in the stream (subject msgSubject + ch), oldest first, each
	// with its stream sequence as its id, its user and its content; an empty
	// (non-nil) slice when limit is 0 or the channel has no message; and a
	// request answers in milliseconds, not after a fetch's whole wait.
	// Decide where reading stops before you start reading (the lesson's
	// primer, step 3: what a batch waits for). A fetch NATS does not answer
	// (natsDown: the cluster is moving a leader) is tried again until ctx
	// ends. Checked by TestEx8_3_History.
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
