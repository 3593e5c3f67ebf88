package chatscale

import (
	"strconv"

	nats "github.com/nats-io/nats.go"

	"serverlab/tools/given/chatcore/proto"
)

// Headers of an event on eventSubject: the server it came from, and the
// channel whose members get it ("0": every connection).
const (
	nodeHeader     = "Chat-Node"
	audienceHeader = "Chat-Channel"
)

// noEvent is the event of a request that caused none.
func (s *Server) noEvent() *nats.Msg { return nil }

// eventLocked delivers m to this server's connections — every one if ch is
// 0, else the members of channel ch — and returns it as a NATS message for
// the other servers, for publishEvent once s.mu is released. The origin
// server delivers directly so that its own clients see events in the order
// of their requests and answers, as in chapter 07. The caller holds s.mu.
func (s *Server) eventLocked(ch uint32, m proto.Message) *nats.Msg {
	frame, err := proto.Encode(m)
	if err != nil {
		s.log.Error("cannot encode an event", "type", m.Type(), "err", err)
		return nil
	}
	s.broadcastLocked(s.audienceLocked(ch), frame)
	msg := nats.NewMsg(eventSubject)
	msg.Header.Set(nodeHeader, s.node)
	msg.Header.Set(audienceHeader, strconv.FormatUint(uint64(ch), 10))
	msg.Data = frame
	return msg
}

// audienceLocked is who gets an event for channel ch (0: everyone).
func (s *Server) audienceLocked(ch uint32) map[*conn]struct{} {
	if ch == 0 {
		return s.conns
	}
	return s.members[ch]
}

// publishEvent sends an event to the other servers, best effort: an event
// lost while NATS is away is lost (the lesson says what a client sees).
func (s *Server) publishEvent(msg *nats.Msg) {
	if msg == nil {
		return
	}
	if err := s.nats.nc.PublishMsg(msg); err != nil {
		s.log.Debug("event not published", "err", err)
	}
}

// subscribeEvents subscribes to the other servers' events; deliverEvents
// hands them to this server's connections.
func (s *Server) subscribeEvents() error {
	ch := make(chan *nats.Msg, 1024)
	if err := s.nats.subscribe(eventSubject, ch); err != nil {
		return err
	}
	s.goWork(func() { s.deliverEvents(ch) })
	return nil
}

// deliverEvents is the events' goroutine.
func (s *Server) deliverEvents(events <-chan *nats.Msg) {
	for {
		select {
		case <-s.ctx.Done():
			return
		case msg := <-events:
			if msg.Header.Get(nodeHeader) == s.node {
				continue // delivered here already
			}
			ch, err := strconv.ParseUint(msg.Header.Get(audienceHeader), 10, 32)
			if err != nil {
				continue
			}
			s.mu.Lock()
			s.broadcastLocked(s.audienceLocked(uint32(ch)), msg.Data)
			s.mu.Unlock()
		}
	}
}
