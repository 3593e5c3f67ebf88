package chatscale

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

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
	msgs := []proto.ChatMessage{}
	if limit <= 0 {
		return msgs, nil
	}
	subject := msgSubject + strconv.FormatUint(uint64(ch), 10)
	for {
		last, err := s.nats.lastOf(ctx, subject)
		if err != nil {
			return nil, fmt.Errorf("the channel's last message: %w", err)
		}
		if last == 0 {
			return msgs, nil
		}
		start, err := s.historyStart(ctx, subject, last, limit)
		if err != nil {
			return nil, fmt.Errorf("count the channel's messages: %w", err)
		}
		got, err := s.nats.readFrom(ctx, subject, start, limit)
		if err != nil {
			return nil, fmt.Errorf("read the history: %w", err)
		}
		if n := len(got); n > 0 && got[n-1].seq >= last {
			for _, m := range got {
				var c chatMessage
				if err := json.Unmarshal(m.data, &c); err == nil {
					msgs = append(msgs, proto.ChatMessage{Content: c.Content, ID: uint32(m.seq), UserID: c.User})
				}
			}
			return msgs, nil
		}
		// The replica that answered is behind the leader (a cluster): the
		// next try may meet another, or this one caught up.
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("read the history: a replica behind the leader: %w", ctx.Err())
		case <-time.After(retryWait):
		}
	}
}

// historyStart is the sequence from which subject holds limit messages
// (1 if it holds fewer): the largest sequence seq ≤ last at which
// countFrom(seq) ≥ limit, found by halving [1, last] — 20 requests for a
// channel of a million messages.
func (s *Server) historyStart(ctx context.Context, subject string, last uint64, limit int) (uint64, error) {
	lo, hi := uint64(1), last+1 // countFrom(lo) ≥ limit or lo is 1; countFrom(hi) < limit
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		n, err := s.nats.countFrom(ctx, subject, mid)
		if err != nil {
			return 0, err
		}
		if n >= uint64(limit) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
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
