package chatscale

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"

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
	msgs := []proto.ChatMessage{}
	if limit <= 0 {
		return msgs, nil
	}
	subject := msgSubject + strconv.FormatUint(uint64(ch), 10)
	last, err := s.nats.stream.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return msgs, nil
	}
	if err != nil {
		return nil, fmt.Errorf("the channel's last message: %w", err)
	}
	cons, err := s.nats.js.OrderedConsumer(ctx, streamName, jetstream.OrderedConsumerConfig{
		FilterSubjects:    []string{subject},
		InactiveThreshold: 10 * time.Second,
	})
	if err != nil {
		return nil, fmt.Errorf("a consumer for the history: %w", err)
	}
	for {
		batch, err := cons.Fetch(historyBatch, jetstream.FetchContext(ctx))
		if err != nil {
			return nil, fmt.Errorf("fetch history: %w", err)
		}
		for msg := range batch.Messages() {
			meta, err := msg.Metadata()
			if err != nil {
				return nil, err
			}
			var m chatMessage
			if err := json.Unmarshal(msg.Data(), &m); err == nil {
				msgs = append(msgs, proto.ChatMessage{Content: m.Content, ID: uint32(meta.Sequence.Stream), UserID: m.User})
				if len(msgs) > limit {
					msgs = msgs[1:]
				}
			}
			if meta.Sequence.Stream >= last.Sequence {
				return msgs, nil
			}
		}
		switch err := batch.Error(); {
		case err == nil:
		case natsDown(err) && ctx.Err() == nil:
			// A consumer made while the cluster moves its leaders (a node
			// died) may not answer yet: fetch again, until ctx ends.
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("fetch history: %w", err)
			case <-time.After(retryWait):
			}
		default:
			return nil, fmt.Errorf("fetch history: %w", err)
		}
	}
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
