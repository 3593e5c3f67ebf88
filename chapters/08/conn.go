package chatscale

import (
	"bufio"
	"encoding/binary"
	"errors"
	"log/slog"
	"net"
	"sync"
	"time"

	"serverlab/tools/given/chatcore/guard"
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
	user     proto.User     // ID 0 until authenticated
	channel  uint32         // the joined channel; 0 = none
	presence guard.Presence // the presence events it may still be sent

	// Owned by the reader goroutine.
	addr          string    // the client's IP: its connections and failed logins count under it
	loginBy       time.Time // an unauthenticated connection is closed at this time
	heartbeat     bool      // it has sent a heartbeat: it is held to IdleTimeout
	loginFailures int       // failed logins; at MaxLoginFailures the connection is closed
	reserved      int64     // bytes of the input budgets its current frame holds
	preAuth       bool      // the reservation is of PreAuthBudget too
}

// readLoop reads frames and handles them, one at a time and in order,
// until the connection ends. A frame that does not decode is answered and
// skipped (as in chapter 07); a frame over 1 MiB ends the connection after
// a notice. Every wait has chapter 07's deadlines (readDeadline), and a
// large frame must fit in the input budgets before its body is read
// (admitInput).
func (s *Server) readLoop(c *conn) error {
	r := bufio.NewReaderSize(c.nc, 64<<10)
	var buf []byte
	for {
		body, err := s.readFrame(c, r, buf)
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
		if c.out.stopped() {
			// Dropped, or its writer failed: nobody reads the answers, and
			// what it had sent (still in the reader's buffer) must not act.
			return errGone
		}
		m, err := proto.Decode(body)
		if err != nil {
			s.answerBadFrame(c, err)
			continue
		}
		s.dispatch(c, m)
	}
}

// readFrame waits for the next frame until readDeadline, then gives the
// rest of the frame IdleTimeout: a slowloris cannot hold a connection.
func (s *Server) readFrame(c *conn, r *bufio.Reader, buf []byte) ([]byte, error) {
	s.releaseInput(c)
	c.nc.SetReadDeadline(s.readDeadline(c))
	if s.closing.Load() { // after setting the deadline: Close sets its own
		return nil, lab.ErrServerClosed
	}
	if c.out.finishing() {
		return nil, errLastWords // the writer sends them, then lingers (endConn)
	}
	if _, err := r.Peek(1); err != nil {
		return nil, err
	}
	c.nc.SetReadDeadline(time.Now().Add(s.cfg.IdleTimeout))
	if s.closing.Load() {
		return nil, lab.ErrServerClosed
	}
	if err := s.admitInput(c, r); err != nil {
		return nil, err
	}
	return proto.ReadFrame(r, buf)
}

// readDeadline is how long the reader waits for c's next frame, as in
// chapter 07: unauthenticated, until loginBy (LoginTimeout after the start
// or the last logout); after a heartbeat, IdleTimeout; else MaxIdle.
func (s *Server) readDeadline(c *conn) time.Time {
	switch {
	case s.session(c).ID == 0:
		return c.loginBy
	case c.heartbeat:
		return time.Now().Add(s.cfg.IdleTimeout)
	}
	return time.Now().Add(s.cfg.Limits.MaxIdle)
}

// errGone is why a reader ended whose connection was dropped.
var errGone = errors.New("the connection's outbox has stopped")

// smallFrame is what a frame may be without drawing on a budget.
const smallFrame = 64 << 10

// errInputBudget is why a connection whose large frame did not fit in a
// budget was closed.
var errInputBudget = errors.New("input over budget")

// admitInput reserves a large frame's size, before its body is read, from
// InputBudget and, for a connection not logged in, PreAuthBudget too (see
// guard.Budget): 600 connections that began 1 MiB frames and sent them
// slowly took this server from 20 to 677 MiB. One that does not fit is told
// Server busy. and closed.
func (s *Server) admitInput(c *conn, r *bufio.Reader) error {
	hdr, err := r.Peek(proto.HeaderSize)
	if err != nil {
		return err
	}
	n := int64(binary.BigEndian.Uint32(hdr))
	if n <= smallFrame || n > proto.MaxFrame {
		return nil // small, or refused by ReadFrame as too large
	}
	stranger := s.session(c).ID == 0
	fits := s.input.Take(n)
	if fits && stranger && !s.preAuthInput.Take(n) {
		s.input.Give(n)
		fits = false
	}
	if !fits {
		c.log.Warn("large frame over budget", "bytes", n, "logged in", !stranger)
		s.reply(c, proto.Error{Value: proto.MsgServerBusy})
		c.out.finish()
		return errInputBudget
	}
	c.reserved, c.preAuth = n, stranger
	return nil
}

// releaseInput gives back c's reservation: its frame was handled, or the
// connection ended.
func (s *Server) releaseInput(c *conn) {
	if c.reserved == 0 {
		return
	}
	s.input.Give(c.reserved)
	if c.preAuth {
		s.preAuthInput.Give(c.reserved)
	}
	c.reserved, c.preAuth = 0, false
}

// mayTryPassword is asked before a login looks at its password at all: an
// address with too many failed logins is refused at once, without a hash
// (guard.Failures). It answers the refusal and reports false.
func (s *Server) mayTryPassword(c *conn, m proto.AuthenticateRequest) bool {
	if s.session(c).ID != 0 || s.failures.Allowed(c.addr) {
		return true
	}
	s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgTooManyFailures})
	return false
}

// wrongPassword answers a failed login and counts it, for c and for its
// address; the MaxLoginFailures-th is answered Too many failed logins… and
// closes the connection, as sshd does after MaxAuthTries.
func (s *Server) wrongPassword(c *conn, requestID uint64) {
	s.failures.Failed(c.addr)
	if c.loginFailures++; c.loginFailures >= s.cfg.Limits.MaxLoginFailures {
		s.reply(c, proto.ErrorResponse{RequestID: requestID, Value: proto.MsgTooManyFailures})
		c.out.finish()
		return
	}
	s.reply(c, proto.ErrorResponse{RequestID: requestID, Value: proto.MsgWrongPassword})
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
		if s.mayTryPassword(c, m) {
			err = s.authenticate(c, m)
		}
	case proto.LogoutRequest:
		err = s.logout(c, m)
		c.loginBy = time.Now().Add(s.cfg.LoginTimeout) // logged out: LoginTimeout to log in again
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
		if s.chatAllowed(c, m) {
			err = s.writeChat(c, m)
		}
	case proto.GetChatsRequest:
		err = s.historyGate(c, m)
	case proto.HeartbeatRequest:
		c.heartbeat = true // held to IdleTimeout from now on
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

// chatAllowed spends a chat message's bytes from its user's budget
// (ChatBurst at once, ChatRate a second; guard.ChatBudget), as chapter 07
// does, and answers 101 Too many messages, try again later. if they are
// not there: one user filled a 64 MiB stream in 6–8 s, after which every
// message of everyone was refused. A connection without a session is left
// to writeChat (Not authorized.).
func (s *Server) chatAllowed(c *conn, m proto.WriteChat) bool {
	u := s.session(c)
	if u.ID == 0 || s.chat.TakeChat(u.ID, m.Content, time.Now()) {
		return true
	}
	c.log.Warn("chat message over the user's budget", "user", u.ID, "bytes", guard.ChatFrame(m.Content),
		"burst", s.cfg.Limits.ChatBurst, "per_second", s.cfg.Limits.ChatRate)
	s.reply(c, proto.Error{Value: proto.MsgTooManyMessages})
	return false
}

// answerFailure tells the client that its request failed: 100 with the
// text to a request, 101 otherwise.
func (s *Server) answerFailure(c *conn, m proto.Message, err error) {
	c.log.Warn("request failed", "type", m.Type(), "err", err)
	s.nats.missing(err) // a stream or bucket gone: made again for the next request
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

// outbox is a connection's queue of encoded frames, bounded in BYTES, as
// chapter 07's: a bound in frames let 10 clients that asked for history and
// did not read hold 529 MiB (1024 frames of up to 1 MiB each). Its writer is
// the only code that writes to the socket.
//
// Every frame pushed has drawn its bytes from the server's output budget
// (Server.send): the outbox gives them back when the frame is written, or
// not queued, or discarded, so that the budget counts exactly what all
// outboxes hold, however a connection ends.
type outbox struct {
	mu       sync.Mutex
	frames   [][]byte
	size     int // bytes in frames
	limit    int
	budget   *guard.Budget
	finished bool // no more frames: the writer sends what is queued and closes
	dead     bool // the writer has stopped: frames are dropped
	wake     chan struct{}
}

func newOutbox(limit int, budget *guard.Budget) *outbox {
	return &outbox{limit: limit, budget: budget, wake: make(chan struct{}, 1)}
}

// discardLocked drops what is queued and gives its bytes back; the caller
// holds o.mu.
func (o *outbox) discardLocked() {
	o.budget.Give(int64(o.size))
	o.frames, o.size = nil, 0
}

// push queues b, whose bytes the caller has taken from the output budget.
// It never blocks; it reports false if b would take the queue past its
// bound in bytes, and then the outbox stops: what it held is discarded,
// and its writer and reader end.
func (o *outbox) push(b []byte) bool {
	o.mu.Lock()
	switch {
	case o.finished || o.dead:
		o.mu.Unlock()
		o.budget.Give(int64(len(b)))
		return true
	case o.size+len(b) > o.limit:
		o.dead = true
		o.discardLocked()
		o.mu.Unlock()
		o.budget.Give(int64(len(b)))
		o.signal()
		return false
	}
	o.frames = append(o.frames, b)
	o.size += len(b)
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

// stopped reports whether the outbox was stopped: the connection was
// dropped, or its writer failed.
func (o *outbox) stopped() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.dead
}

// writeLoop writes queued frames, each batch in one writev, until the
// outbox is finished and empty or a write fails. It reports whether it
// ended in order (finished, every frame written); its caller then closes
// nc (endConn), which ends the reader too.
func (o *outbox) writeLoop(nc net.Conn, timeout time.Duration) (inOrder bool) {
	for {
		o.mu.Lock()
		frames, size, finished, dead := o.frames, o.size, o.finished, o.dead
		o.frames, o.size = nil, 0
		o.mu.Unlock()
		if dead {
			o.budget.Give(int64(size)) // nothing: dead outboxes hold none
			return false
		}
		if len(frames) == 0 {
			if finished {
				return true
			}
			<-o.wake
			continue
		}
		nc.SetWriteDeadline(time.Now().Add(timeout))
		bufs := net.Buffers(frames)
		_, err := bufs.WriteTo(nc)
		o.budget.Give(int64(size)) // written, or lost with the connection
		if err != nil {
			o.mu.Lock()
			o.dead = true
			o.discardLocked()
			o.mu.Unlock()
			return false
		}
	}
}
