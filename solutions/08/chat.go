package chatscale

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	nats "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"serverlab/tools/given/chatcore/proto"
	"serverlab/tools/given/lab"
)

// chatMessage is a chat message as the stream stores it; the subject says
// the channel, the stream's sequence is its id.
type chatMessage struct {
	Channel uint32 `json:"-"`
	User    uint32 `json:"user"`
	Content string `json:"content"`
}

// errNotStored is the answer to a chat message the stream did not
// acknowledge in time.
//
//lint:ignore ST1005 the protocol's verbatim error text, sent to the client as it is
var errNotStored = errors.New("Message not stored.")

// writeChat publishes a chat message to the stream (104). The reader waits
// for the stream's acknowledgement, so a connection has one message in
// flight at a time. The echo, and every other copy, comes from each
// server's consumer (see apply): what a client sees is what the stream
// holds, in the stream's order.
func (s *Server) writeChat(c *conn, m proto.WriteChat) error {
	s.mu.Lock()
	u, ch := c.user, c.channel
	s.mu.Unlock()
	switch {
	case u.ID == 0:
		s.reply(c, proto.Error{Value: proto.MsgNotAuthorized})
		return nil
	case ch == 0:
		s.reply(c, proto.Error{Value: proto.MsgNoChannel})
		return nil
	case len(m.Content) > s.cfg.Limits.MaxMessage:
		s.reply(c, proto.Error{Value: proto.MsgMessageTooLong})
		return nil
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.PublishTimeout)
	defer cancel()
	id := s.node + "." + strconv.FormatUint(s.seq.Add(1), 10)
	_, err := s.publishChat(ctx, chatMessage{Channel: ch, User: u.ID, Content: m.Content}, id)
	if errors.Is(err, lab.ErrNotImplemented) {
		return err
	}
	if err != nil {
		c.log.Error("storing a message", "err", err)
		s.nats.missing(err)
		return errNotStored
	}
	return nil
}

// retryWait is the pause between two tries of a publish, and publishTry
// bounds one try: a request that went out just as the connection broke
// gets no answer ever, and must not use up the whole publish timeout.
const (
	retryWait  = 100 * time.Millisecond
	publishTry = time.Second
)

// encodeChat is m as the stream stores it: JSON without HTML escaping, as
// proto writes frames, so that a message takes in the stream what
// guard.ChatFrame charges its writer for. json.Marshal wrote each '<', '>'
// and '&' as 6 bytes: one user's '<'s filled 9.4 MB of the stream for
// 1.5 MB of chat budget (attacker5's F1).
func encodeChat(m chatMessage) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// publishChat stores m in the stream under the message id msgID and
// returns its sequence once the stream has acknowledged it. A try that
// gets no answer (within publishTry) is repeated with the same id until
// ctx ends: if the first try was stored and only its acknowledgement lost,
// the stream drops the second copy and acknowledges the first.
func (s *Server) publishChat(ctx context.Context, m chatMessage, msgID string) (uint64, error) {
	data, err := encodeChat(m)
	if err != nil {
		return 0, err
	}
	msg := &nats.Msg{Subject: msgSubject + strconv.FormatUint(uint64(m.Channel), 10), Data: data}
	for {
		try, cancel := context.WithTimeout(ctx, publishTry)
		ack, err := s.nats.js.PublishMsg(try, msg, jetstream.WithMsgID(msgID), jetstream.WithRetryAttempts(0))
		cancel()
		if err == nil {
			return ack.Sequence, nil
		}
		if !natsDown(err) {
			return 0, err
		}
		select {
		case <-ctx.Done():
			return 0, err
		case <-time.After(retryWait):
		}
	}
}

// consume is the consumer's goroutine: it reads the stream from sequence
// from on and hands every message to apply, in the stream's order. When
// the connection to NATS comes back, it starts again from from: whatever
// was missed meanwhile comes again, and much that was not — apply's
// high-water mark keeps each message to one delivery.
func (s *Server) consume(from uint64) {
	for s.ctx.Err() == nil {
		if first, remade := s.streamRemade(); remade {
			from = first
			s.hwm = first - 1
		}
		err := s.follow(from)
		if s.ctx.Err() != nil {
			return
		}
		if err != nil {
			s.log.Warn("following the stream", "err", err)
			s.nats.missing(err)
		}
		select {
		case <-s.ctx.Done():
		case <-time.After(retryWait):
		}
	}
}

// followPull is how long one pull of the consumer waits for messages.
const followPull = 5 * time.Second

// followResets is how many times the ordered consumer tries to make itself
// again before Next gives up: 1 + 2 + 4 s of pauses between the tries.
// With 2, a follower under load gave up during a blip it would have
// outlived and started again. Close does not wait them out (see follow).
const followResets = 4

// streamCheck is how often follow asks whether the stream is still the one
// it follows (see streamRemade).
const streamCheck = 2 * time.Second

// streamRemade reports whether the stream was deleted and made again
// since this server last looked (NATS's store wiped, then a server made
// the stream anew): its sequences start again from 1, below the
// high-water mark, and a consumer that resumed where it was would wait
// for ever while messages are stored and never delivered — silence. It
// returns the new stream's first sequence, and says so in the log: the
// messages before the wipe are gone.
func (s *Server) streamRemade() (first uint64, remade bool) {
	ctx, cancel := s.requestContext()
	defer cancel()
	info, err := s.nats.stream.Info(ctx)
	if err != nil || info.Created.Equal(s.nats.created) {
		return 0, false
	}
	s.log.Error("the stream was deleted and made again: what it held is lost; following the new one from its start",
		"stream", streamName, "made", info.Created, "was", s.nats.created)
	s.nats.created = info.Created
	return max(info.State.FirstSeq, 1), true
}

// follow reads the stream from sequence from with an ordered consumer
// until Close, an error, or a reset (the connection came back).
func (s *Server) follow(from uint64) error {
	var resetWatch sync.WaitGroup
	defer resetWatch.Wait()
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	cons, err := s.nats.js.OrderedConsumer(ctx, streamName, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{msgSubject + "*"},
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:    from,
		// Bounded, so that Next returns and Close is not held up: the
		// library's default retries for ever, deaf to ctx, and with the
		// stream gone (NATS restarted on an empty store) SIGTERM hung in
		// it. consume tries again, after looking at the stream.
		MaxResetAttempts: followResets,
	})
	if err != nil {
		return err
	}
	// Pulls of 5 s, with heartbeats every 2.5 s: a consumer whose node
	// died is noticed, and made again elsewhere, within seconds (the
	// default, 30 s pulls, took 20 s after a kill -9).
	it, err := cons.Messages(jetstream.PullExpiry(followPull))
	if err != nil {
		return err
	}
	defer it.Stop()
	// On Close, Stop as well: the ordered consumer's reset (the stream
	// gone) pauses 1, 2, 4 s between its tries, deaf to ctx and longer than
	// testkit's bound on Close on a quiet machine, but Stop marks the
	// iterator closed at once and the reset's next try gives up. Only on
	// Close: Stop waits for the reset to end (it takes the consumer's lock),
	// and a subscription the reset makes meanwhile ends with the
	// connection, which Close closes next.
	defer context.AfterFunc(s.ctx, it.Stop)()
	created := s.nats.created
	resetWatch.Go(func() { // ends with ctx: follow's own cancel, or Close
		t := time.NewTicker(streamCheck)
		defer t.Stop()
		for {
			select {
			case <-s.nats.resets:
				cancel()
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if s.streamChanged(ctx, created) {
					cancel()
					return
				}
			}
		}
	})
	for {
		// With ctx, not it.Stop: a Stop that comes while the ordered
		// consumer resets itself can miss the subscription it makes.
		msg, err := it.Next(jetstream.NextContext(ctx))
		if ctx.Err() != nil {
			return nil // Close, or a reset: consume starts again
		}
		if err != nil {
			return err
		}
		meta, err := msg.Metadata()
		if err != nil {
			continue
		}
		m, err := decodeChat(msg.Subject(), msg.Data())
		if err != nil {
			s.log.Warn("a message of the stream does not decode", "seq", meta.Sequence.Stream, "err", err)
			continue
		}
		s.apply(meta.Sequence.Stream, m)
	}
}

// streamChanged reports whether the stream now is not the one made at
// created (consume then finds out how, with streamRemade).
func (s *Server) streamChanged(ctx context.Context, created time.Time) bool {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	info, err := s.nats.stream.Info(ctx)
	return err == nil && !info.Created.Equal(created)
}

// decodeChat reads a chat message of the stream.
func decodeChat(subject string, data []byte) (chatMessage, error) {
	var m chatMessage
	ch, err := strconv.ParseUint(strings.TrimPrefix(subject, msgSubject), 10, 32)
	if err != nil {
		return m, err
	}
	err = json.Unmarshal(data, &m)
	m.Channel = uint32(ch)
	return m, err
}

// apply delivers the stream's message seq to this server's members of its
// channel — the sender's echo too, if the sender is here — unless it was
// delivered already: the high-water mark s.hwm is the highest sequence
// delivered, and the stream's sequences only grow, so anything at or below
// it is a copy. Only the consumer's goroutine calls it.
func (s *Server) apply(seq uint64, m chatMessage) {
	if seq <= s.hwm {
		return
	}
	s.hwm = seq
	frame, err := proto.Encode(proto.ReceiveChat{ChannelID: m.Channel, Content: m.Content, UserID: m.User})
	if err != nil {
		s.log.Error("a message too large to deliver", "seq", seq, "err", err)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.broadcastLocked(s.members[m.Channel], frame)
}
