package chatcore

import (
	"time"

	"errors"
	"slices"

	"serverlab/tools/given/chatcore/proto"
)

// createUser registers a user (109 → 110). Nobody needs a session for it, as
// in the original. The password is stored only as its hash. An address that
// has registered its budget lately (registrationLimiter) is refused without
// a hash.
func (s *Server) createUser(c *conn, m proto.CreateUserRequest) error {
	s.mu.Lock()
	_, exists := s.users[m.Name]
	s.mu.Unlock()
	if exists { // answer at once; the store would say the same after a hash
		s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgUserExists})
		return nil
	}
	if !s.registrations.allowed(c.addr) {
		s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgTooManyRegistrations})
		return nil
	}
	hash, err := s.hashPassword(m.Password)
	if err != nil {
		return err // Server busy. costs the address nothing: it was not hashed
	}
	s.registrations.count(c.addr)
	id, err := s.store.CreateUser(m.Name, hash)
	if errors.Is(err, ErrExists) { // someone else took the name meanwhile
		s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgUserExists})
		return nil
	}
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.addUser(&user{id: id, name: m.Name, hash: hash})
	s.mu.Unlock()
	s.logins.remember(id, m.Password) // its first login needs no second hash
	s.reply(c, proto.CreateUserResponse{RequestID: m.RequestID, User: proto.User{ID: id, Name: m.Name}})
	return nil
}

// authenticate logs the connection in (115 → 116, then 126 to every open
// connection). A connection carries one user, and a user is on one
// connection: a second login is refused, on the same connection ("Already
// logged in.") and on another ("<name> is already logged in."), and the
// existing session keeps going.
func (s *Server) authenticate(c *conn, m proto.AuthenticateRequest) error {
	s.mu.Lock()
	authed, u := c.user != nil, s.users[m.Name]
	s.mu.Unlock()
	if authed {
		s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgAlreadyLoggedIn})
		return nil
	}
	ok, err := s.checkPassword(c, u, m.Password)
	if err != nil {
		return err
	}
	if u == nil || !ok {
		s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgWrongPassword})
		return nil
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if _, taken := s.sessions[u.id]; taken {
		s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgUserLoggedIn(m.Name)})
		return nil
	}
	s.sessions[u.id] = c
	c.user = u
	s.reply(c, proto.AuthenticateResponse{RequestID: m.RequestID, User: proto.User{ID: u.id, Name: u.name}})
	s.broadcastPresenceLocked(s.conns, proto.UserLoginEvent{UserID: u.id}, c)
	return nil
}

// logout ends the session (123): 125 to every connection, the requester
// included, then 124 to the requester. The connection leaves its channel
// without a 127, stays open, and may log in again.
func (s *Server) logout(c *conn, m proto.LogoutRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.user == nil {
		s.notAuthorized(c, m.RequestID)
		return nil
	}
	s.endSession(c)
	c.loginBy = time.Now().Add(s.cfg.LoginTimeout)
	s.reply(c, proto.LogoutResponse{RequestID: m.RequestID})
	return nil
}

// endSession logs c's user out, if it has one, and takes c out of its
// channel. The caller holds s.mu.
func (s *Server) endSession(c *conn) {
	if ch := c.channel; ch != 0 {
		delete(s.members[ch], c)
		c.channel = 0
	}
	if c.user == nil {
		return
	}
	delete(s.sessions, c.user.id)
	s.broadcastPresenceLocked(s.conns, proto.UserLogoutEvent{UserID: c.user.id}, c)
	c.user = nil
}

// getUser looks a user up by name (113 → 114).
func (s *Server) getUser(c *conn, m proto.GetUserRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.user == nil {
		s.notAuthorized(c, m.RequestID)
		return nil
	}
	u, ok := s.users[m.Name]
	if !ok {
		s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgNoSuchUser(m.Name)})
		return nil
	}
	s.reply(c, proto.GetUserResponse{RequestID: m.RequestID, User: proto.User{ID: u.id, Name: u.name}})
	return nil
}

// getUsers looks users up by id (111 → 112), in the order asked; unknown
// ids are left out and repeated ones repeated, as in the original. admit
// bounds the ids (MaxUserIDs); the reply's size is added up as it is
// gathered, and one that would not fit in a frame (only a database from
// before the name limits can have such names) is answered Reply too large.
// without being built. The reply is encoded after the lock is released.
func (s *Server) getUsers(c *conn, m proto.GetUsersRequest) error {
	s.mu.Lock()
	if c.user == nil {
		s.mu.Unlock()
		s.notAuthorized(c, m.RequestID)
		return nil
	}
	users := make([]proto.User, 0, len(m.UserIDs))
	size := 0
	for _, id := range m.UserIDs {
		if u, ok := s.usersID[id]; ok {
			if size += itemCost(u.name); size > replyRoom {
				break
			}
			users = append(users, proto.User{ID: u.id, Name: u.name})
		}
	}
	s.mu.Unlock()
	if size > replyRoom {
		s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgReplyTooLarge})
		return nil
	}
	s.reply(c, proto.GetUsersResponse{RequestID: m.RequestID, Users: slices.Clip(users)})
	return nil
}
