package chat

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"time"

	"serverlab/tools/given/wire"
)

// Replies to a login.
const (
	replyOK   = wire.ReplyOK
	replyFail = wire.ReplyFail
)

// Why a login failed.
var (
	errNotLogin = errors.New("first frame is not LOGIN")
	errPassword = errors.New("unknown user or wrong password")
	errLoggedIn = errors.New("name already logged in")
)

// login reads the connection's first frame, which must be a LOGIN, checks the
// name and password against the users file, and claims the name. It answers
// OK or FAIL itself, with a direct write: the client's writer goroutine does
// not run yet, so nothing else writes to conn.
//
// It returns the logged-in client, or an error after which the caller closes
// the connection: no reply for a first frame that is not LOGIN (or is not a
// frame at all), FAIL for a wrong password or a name already online.
func (s *Server) login(conn net.Conn) (*client, error) {
	conn.SetDeadline(time.Now().Add(s.cfg.LoginTimeout))
	f, err := wire.ReadFrame(conn)
	if err != nil {
		return nil, err
	}
	if f.Type != wire.Login {
		return nil, fmt.Errorf("%w: %v", errNotLogin, f.Type)
	}
	c := &client{name: f.Sender, conn: conn, out: newOutbox(s.cfg.MaxPending), written: make(chan struct{})}
	err = s.authenticate(f.Sender, string(f.Payload))
	if err == nil && !s.join(c) {
		err = errLoggedIn
	}
	answer := replyOK
	if err != nil {
		answer = replyFail
	}
	reply := wire.Frame{Type: wire.Login, Sender: wire.ServerName, Target: f.Sender, Payload: []byte(answer)}
	if werr := wire.WriteFrame(conn, reply); werr != nil && err == nil {
		s.leave(c)
		err = werr
	}
	if err != nil {
		return nil, fmt.Errorf("%q: %w", f.Sender, err)
	}
	conn.SetDeadline(time.Time{}) // logged in: a quiet client is a normal client
	return c, nil
}

// authenticate checks name and password against the users file.
//
// The file is in memory (s.users): Refresh reads only what the discovery
// server has appended since the last login, so a user who registered a
// moment ago can log in, and a login costs a stat, not a read of a file that
// may hold thousands of users. (Re-reading the whole file at every login let
// a flood of registrations make every login take seconds.)
func (s *Server) authenticate(name, password string) error {
	if err := s.users.Refresh(0); err != nil {
		s.log.Error("reading the users file", "err", err) // answer from what was read before
	}
	u, ok := s.users.Lookup(name)
	// Compare in constant time, so the time taken says nothing about how much
	// of a guess was right.
	if !ok || subtle.ConstantTimeCompare([]byte(u.Password), []byte(password)) != 1 {
		return errPassword
	}
	return nil
}

// join claims c's name. It reports false if the name is online already: the
// newcomer is refused, so nobody can take over a session by logging in again
// with the same password.
func (s *Server) join(c *client) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, taken := s.online[c.name]; taken {
		return false
	}
	s.online[c.name] = c
	return true
}

// leave releases c's name and closes its outbox, which stops its writer.
func (s *Server) leave(c *client) {
	s.goOffline(c)
	c.out.close()
}

// goOffline releases c's name: nobody can send to it any more.
func (s *Server) goOffline(c *client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.online[c.name] == c {
		delete(s.online, c.name)
	}
}
