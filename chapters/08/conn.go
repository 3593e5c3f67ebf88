package chatscale

import (
	"bufio"
	"errors"
	"log/slog"
	"net"
	"sync"
	"time"

	"serverlab/tools/given/chatcore/proto"
	"serverlab/tools/given/lab"
)

// conn is one client connection.
type conn struct {
	id  uint64
	nc  net.Conn
	out *outbox
	log *slog.Logger

	// Guarded by Server.mu.
	user    proto.User // ID 0 until authenticated
	channel uint32     // the joined channel; 0 = none
}

// readLoop reads frames and handles them, one at a time and in order,
// until the connection ends. A frame that does not decode is answered and
// skipped (as in chapter 07); a frame over 1 MiB ends the connection after
// a notice.
func (s *Server) readLoop(c *conn) error {
	r := bufio.NewReaderSize(c.nc, 64<<10)
	var buf []byte
	for {
		if s.closing.Load() {
			return lab.ErrServerClosed
		}
		body, err := proto.ReadFrame(r, buf)
		if errors.Is(err, proto.ErrTooLarge) {
			s.reply(c, proto.Error{Value: proto.MsgFrameTooLarge})
			return err
		}
		if err != nil {
			return err
		}
		if cap(body) <= 64<<10 {
			buf = body
		}
		m, err := proto.Decode(body)
		if err != nil {
			s.answerBadFrame(c, err)
			continue
		}
		s.dispatch(c, m)
	}
}

// answerBadFrame answers a frame that did not decode, as chapter 07 does.
func (s *Server) answerBadFrame(c *conn, err error) {
	var de *proto.DecodeError
	switch {
	case errors.As(err, &de) && de.HasRequestID:
		s.reply(c, proto.ErrorResponse{RequestID: de.RequestID, Value: proto.MsgMalformed})
	case errors.Is(err, proto.ErrUnknownType):
		s.reply(c, proto.Error{Value: proto.MsgUnknownType})
	default:
		s.reply(c, proto.Error{Value: proto.MsgMalformed})
	}
}

// dispatch runs the handler of m's type. A handler's error is answered as
// a failure of the request (see failureText).
func (s *Server) dispatch(c *conn, m proto.Message) {
	var err error
	switch m := m.(type) {
	case proto.CreateUserRequest:
		err = s.createUser(c, m)
	case proto.AuthenticateRequest:
		err = s.authenticate(c, m)
	case proto.LogoutRequest:
		err = s.logout(c, m)
	case proto.GetUserRequest:
		err = s.getUser(c, m)
	case proto.GetUsersRequest:
		err = s.getUsers(c, m)
	case proto.CreateChannelRequest:
		err = s.createChannel(c, m)
	case proto.GetChannelsRequest:
		err = s.getChannels(c, m)
	case proto.GetChannelRequest:
		err = s.getChannel(c, m)
	case proto.JoinChannelRequest:
		err = s.joinChannel(c, m)
	case proto.WriteChat:
		err = s.writeChat(c, m)
	case proto.GetChatsRequest:
		err = s.getChats(c, m)
	case proto.HeartbeatRequest:
		s.reply(c, proto.HeartbeatResponse{RequestID: m.RequestID})
	case proto.Shutdown:
		// One server of several is stopped by its operator, never by a
		// client: the others would go on without it anyway.
		s.reply(c, proto.Error{Value: proto.MsgNotAllowed})
	default:
		s.reply(c, proto.Error{Value: proto.MsgUnexpectedType})
	}
	if err != nil {
		s.answerFailure(c, m, err)
	}
}

// answerFailure tells the client that its request failed: 100 with the
// text to a request, 101 otherwise.
func (s *Server) answerFailure(c *conn, m proto.Message, err error) {
	c.log.Warn("request failed", "type", m.Type(), "err", err)
	text := failureText(err)
	if r, ok := m.(proto.Requester); ok {
		s.reply(c, proto.ErrorResponse{RequestID: r.Request(), Value: text})
		return
	}
	s.reply(c, proto.Error{Value: text})
}

// failureText is what a client is told of a failure: Message not stored.
// and a stub's "not implemented" as they are, anything else (NATS down, a
// bucket that did not answer) Storage failed.
func failureText(err error) string {
	for _, known := range []error{errNotStored, lab.ErrNotImplemented} {
		if errors.Is(err, known) {
			return err.Error()
		}
	}
	return proto.MsgStorageFailed
}

// session returns c's user, under s.mu; ID 0 if c is not authenticated.
func (s *Server) session(c *conn) proto.User {
	s.mu.Lock()
	defer s.mu.Unlock()
	return c.user
}

// notAuthorized answers a request of a connection without a session.
func (s *Server) notAuthorized(c *conn, requestID uint64) {
	s.reply(c, proto.ErrorResponse{RequestID: requestID, Value: proto.MsgNotAuthorized})
}

// outbox is a connection's queue of encoded frames, bounded in frames. Its
// writer is the only code that writes to the socket.
type outbox struct {
	mu       sync.Mutex
	frames   [][]byte
	limit    int
	finished bool // no more frames: the writer sends what is queued and closes
	dead     bool // the writer has stopped: frames are dropped
	wake     chan struct{}
}

func newOutbox(limit int) *outbox {
	return &outbox{limit: limit, wake: make(chan struct{}, 1)}
}

// push queues b. It never blocks; it reports false if the queue is full.
func (o *outbox) push(b []byte) bool {
	o.mu.Lock()
	switch {
	case o.finished || o.dead:
		o.mu.Unlock()
		return true
	case len(o.frames) >= o.limit:
		o.mu.Unlock()
		return false
	}
	o.frames = append(o.frames, b)
	o.mu.Unlock()
	o.signal()
	return true
}

// finish lets the writer send what is queued, then close the socket.
func (o *outbox) finish() {
	o.mu.Lock()
	o.finished = true
	o.mu.Unlock()
	o.signal()
}

func (o *outbox) signal() { signal(o.wake) }

// writeLoop writes queued frames, each batch in one writev, until the
// outbox is finished and empty or a write fails; then it closes nc.
func (o *outbox) writeLoop(nc net.Conn, timeout time.Duration) {
	defer nc.Close()
	for {
		o.mu.Lock()
		frames, finished := o.frames, o.finished
		o.frames = nil
		o.mu.Unlock()
		if len(frames) == 0 {
			if finished {
				return
			}
			<-o.wake
			continue
		}
		nc.SetWriteDeadline(time.Now().Add(timeout))
		bufs := net.Buffers(frames)
		if _, err := bufs.WriteTo(nc); err != nil {
			o.mu.Lock()
			o.dead, o.frames = true, nil
			o.mu.Unlock()
			return
		}
	}
}
