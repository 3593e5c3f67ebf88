//go:build linux

package evloop

import (
	"errors"
	"log/slog"
	"time"

	"serverlab/tools/given/users"
	"serverlab/tools/given/wire"
)

// ChatConfig configures the chat server.
type ChatConfig struct {
	// UsersPath is the users file the discovery server writes (default
	// "users.txt"). It is read once by NewChat; then the loop reads only what
	// the discovery server appends (users.Cache), at most refreshBudget bytes
	// at a time, so a user who registers while the chat server runs can log
	// in and no read of the file stalls the loop.
	UsersPath string
	// LoginTimeout is how long a new connection has to log in (default 10s):
	// a connection that never does would otherwise hold its fd for ever.
	LoginTimeout time.Duration
	// Loop tunes the event loop.
	Loop Options
}

// Replies of the chat server.
const (
	replyOK      = wire.ReplyOK
	replyFail    = wire.ReplyFail
	replyOffline = wire.NotOnline
)

// refreshBudget bounds what one refresh of the users file reads, inside the
// loop: everyone waits while it runs. A registration appends one line, so a
// refresh reads a line or two; a file replaced by a large one is read over
// several refreshes (64 KiB take about 100 µs), and until then the loop
// answers from the users it had.
const refreshBudget = 64 << 10

// Errors that close a connection.
var (
	errNotLoggedIn = errors.New("first frame is not a LOGIN")
	errUnexpected  = errors.New("unexpected frame type after login")
)

// NewChat returns the chat server of chat protocol v1 (docs/protocols.md §1)
// on an event loop: one goroutine serves every client.
func NewChat(cfg ChatConfig) (*Loop, error) {
	if cfg.UsersPath == "" {
		cfg.UsersPath = "users.txt"
	}
	if cfg.LoginTimeout <= 0 {
		cfg.LoginTimeout = 10 * time.Second
	}
	if cfg.Loop.Logger == nil {
		cfg.Loop.Logger = slog.Default()
	}
	s := &chat{users: users.NewCache(cfg.UsersPath, cfg.Loop.Logger), loginTimeout: cfg.LoginTimeout,
		log: cfg.Loop.Logger, online: map[string]*Conn{}}
	// The whole file, once, before the loop runs: from then on only what is
	// appended.
	if err := s.users.Refresh(0); err != nil {
		return nil, err
	}
	return New(s, cfg.Loop), nil
}

// chat is the chat server's Handler. Everything in it belongs to the loop's
// goroutine: no lock anywhere. (Chapter 02 needed a mutex around the map of
// online users, because every client's goroutine touched it.)
type chat struct {
	users        *users.Cache // users.txt in memory
	loginTimeout time.Duration
	log          *slog.Logger

	online   map[string]*Conn // logged-in users
	awaiting []loginDeadline  // connections not logged in yet, oldest first
	frame    []byte           // scratch buffer: every outgoing frame is encoded here
}

// loginDeadline is when a connection that has not logged in is closed. Every
// connection gets the same timeout, so deadlines come in the order the
// connections do: a FIFO queue, not a heap.
type loginDeadline struct {
	c  *Conn
	at time.Time
}

// refresh reads what has been appended to the users file since the last
// refresh, refreshBudget bytes at most.
func (s *chat) refresh() {
	if err := s.users.Refresh(refreshBudget); err != nil {
		s.log.Error("reading the users file", "err", err)
	}
}

// Opened starts the new connection's login deadline.
func (s *chat) Opened(c *Conn) {
	s.awaiting = append(s.awaiting, loginDeadline{c, time.Now().Add(s.loginTimeout)})
}

// Tick closes the connections whose login deadline has passed, and returns
// the next deadline.
func (s *chat) Tick(now time.Time) time.Time {
	// TODO(ex 5.9): Done when: every connection whose login deadline has passed
	// and that is still not logged in is closed; deadlines of connections that
	// logged in or closed are dropped; the result is the earliest deadline
	// still pending, or the zero time with an empty queue, which then holds no
	// memory. Checked by TestEx5_9_ChatLogin.
	return time.Time{}
}

// Closed takes a logged-in user offline.
func (s *chat) Closed(c *Conn, err error) {
	if name, ok := c.Session.(string); ok && s.online[name] == c {
		delete(s.online, name)
		s.log.Debug("logged out", "user", name, "err", err)
	}
}

// Data serves every complete frame that has arrived, in order.
func (s *chat) Data(c *Conn, in []byte) (int, error) {
	var err error
	used, derr := DrainFrames(in, func(f wire.Frame) bool {
		err = s.serve(c, f)
		return err == nil && !c.Congested()
	})
	if derr != nil {
		return used, derr
	}
	return used, err
}

// serve handles one frame from c.
func (s *chat) serve(c *Conn, f wire.Frame) error {
	name, loggedIn := c.Session.(string)
	if !loggedIn {
		return s.login(c, f)
	}
	switch f.Type {
	case wire.Broadcast:
		s.broadcast(c, name, f.Target, f.Payload)
	case wire.PrivateMsg:
		s.private(c, name, f.Target, f.Payload)
	case wire.QueryUser:
		s.query(c, name)
	case wire.StatusUpdate:
		// accepted and ignored
	default:
		return errUnexpected
	}
	return nil
}

// login answers the first frame of a connection: OK for a registered user
// with the right password who is not logged in already, FAIL otherwise (and
// the connection closes once FAIL is sent). Anything but a LOGIN closes the
// connection without a reply.
func (s *chat) login(c *Conn, f wire.Frame) error {
	// TODO(ex 5.9): Done when: a connection that sends anything but LOGIN first
	// is closed without a reply; an unknown name, a wrong password (compared in
	// constant time) or a name already online gets a FAIL reply and the
	// connection closes once it is flushed; a good login makes the connection
	// that user's session, records it online and gets OK. Every answer is a
	// LOGIN frame from the server to the user, and the user list is re-read
	// first (users may have registered through chapter 01). Checked by
	// TestEx5_9_ChatLogin.
	return notImplemented("5.9", "chat.login")
}

// broadcast relays a message to every other logged-in client: its header as
// the client wrote it (a target of "all" stays "all"), but with the sender's
// authenticated name (the original relayed the sender as sent too, so anyone
// could speak for anyone). The frame is encoded once; each Write copies it
// only if that client's socket does not take it at once.
func (s *chat) broadcast(from *Conn, name, target string, payload []byte) {
	// TODO(ex 5.10): Done when: every online client but the sender gets one
	// BROADCAST from the authenticated name with the target as the client wrote
	// it, encoded once for all of them; a client whose write fails is closed,
	// and only that one. Checked by TestEx5_10_ChatBroadcast.
}

// private delivers a message to its target only, or tells the sender that
// the target is not online.
func (s *chat) private(from *Conn, name, target string, payload []byte) {
	// TODO(ex 5.11): Done when: an online target gets a PRIVATE_MSG from the
	// sender; an offline or unknown one means the sender gets a PRIVATE_MSG
	// from the server with the offline reply. Checked by
	// TestEx5_11_ChatPrivateMessage.
}

// query answers with every registered user, sorted by name, and whether they
// are online, in the format of wire.UserList.
func (s *chat) query(c *Conn, name string) {
	// TODO(ex 5.12): Done when: the asker gets one QUERY_USER frame from the
	// server whose payload lists every registered user (re-read first), each
	// marked active when online. Checked by TestEx5_12_ChatUserQuery.
}

// send encodes f and writes it to c.
func (s *chat) send(c *Conn, f wire.Frame) {
	if s.encode(f) {
		c.Write(s.frame)
	}
}

// encode encodes f into s.frame; it logs and reports false for a frame that
// cannot be encoded (a name too long to fit, which login rules out).
func (s *chat) encode(f wire.Frame) bool {
	var err error
	if s.frame, err = wire.Append(s.frame[:0], f); err != nil {
		s.log.Error("encoding a frame", "frame", f, "err", err)
		return false
	}
	return true
}
