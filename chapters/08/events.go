package chatscale

import (
	"strconv"
	"time"

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
	s.deliverLocked(s.audienceLocked(ch), m, frame)
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
			m, err := proto.Decode(msg.Data[min(len(msg.Data), proto.HeaderSize):])
			if err != nil {
				continue
			}
			s.mu.Lock()
			s.deliverLocked(s.audienceLocked(uint32(ch)), m, msg.Data)
			s.mu.Unlock()
		}
	}
}

// deliverLocked sends the event m, encoded as frame, to every connection in
// to — a presence event (126, 125, 128, 127) only within each receiver's
// presence budget, as in chapter 07 (guard.Presence): PresenceBurst at once,
// refilled at PresenceRate a second. Events about the receiver's own session
// are always sent (its client acts on them), and so is every other event.
// Without the budget, 20 clients logging in and out, or hopping between
// channels, sent 154–352 MB to 200 observers on two servers in 15 s, and
// an honest client's chat waited 1.3 s; each server budgets its own
// connections, whichever server the event came from. The caller holds s.mu.
func (s *Server) deliverLocked(to map[*conn]struct{}, m proto.Message, frame []byte) {
	var who uint32 // whose session the event is about
	switch m := m.(type) {
	case proto.UserLoginEvent:
		who = m.UserID
	case proto.UserLogoutEvent:
		who = m.UserID
	case proto.ChannelJoinEvent:
		who = m.UserID
	case proto.ChannelLeaveEvent:
		who = m.UserID
	default:
		s.broadcastLocked(to, frame)
		return
	}
	now := time.Now()
	for c := range to {
		if c.user.ID == who || c.presence.Take(now, s.cfg.Limits.PresenceRate, s.cfg.Limits.PresenceBurst) {
			s.send(c, frame)
		} else if c.presence.Dropped() == 1 {
			c.log.Info("presence events over the connection's budget are not sent to it",
				"burst", s.cfg.Limits.PresenceBurst, "per_second", s.cfg.Limits.PresenceRate)
		}
	}
}
