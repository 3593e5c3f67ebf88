package chatcore

import (
	"serverlab/tools/chatcore/proto"
	"serverlab/tools/lab"
)

// createUser registers a user (109 → 110). Nobody needs a session for it, as
// in the original. The password is stored only as its hash.
func (s *Server) createUser(c *conn, m proto.CreateUserRequest) error {
	// TODO(ex 7.2): a name in s.users gets 100 proto.MsgUserExists. Else
	// hash the password (s.hashPassword, outside s.mu: it is slow), store
	// the user (s.store.CreateUser; ErrExists is MsgUserExists too), add it
	// to the caches under s.mu, s.logins.remember(id, password) (its first
	// login then needs no second hash), and reply 110 with its id and name.
	// Checked by TestEx7_2_Users.
	return lab.NotImplemented("7.2", "Server.createUser")
}

// authenticate logs the connection in (115 → 116, then 126 to every open
// connection). A connection carries one user, and a user is on one
// connection: a second login is refused, on the same connection ("Already
// logged in.") and on another ("<name> is already logged in."), and the
// existing session keeps going.
func (s *Server) authenticate(c *conn, m proto.AuthenticateRequest) error {
	// TODO(ex 7.2): c.user set: 100 MsgAlreadyLoggedIn. Check the password
	// with s.checkPassword(c, u, password) — u nil for an unknown name: it
	// checks against s.dummyHash(), so that both take as long; it calls your
	// verifyPassword, and counts failures — outside s.mu; its error is
	// yours to return; a miss is 100 MsgWrongPassword. Then
	// under s.mu: the user in s.sessions is 100 MsgUserLoggedIn(name); else
	// record the session (s.sessions, c.user), reply 116, and
	// s.broadcastLocked(s.conns, 126). Checked by TestEx7_2_Users.
	return lab.NotImplemented("7.2", "Server.authenticate")
}

// logout ends the session (123): 125 to every connection, the requester
// included, then 124 to the requester. The connection leaves its channel
// without a 127, stays open, and may log in again.
func (s *Server) logout(c *conn, m proto.LogoutRequest) error {
	// TODO(ex 7.2): under s.mu: no session is 100 MsgNotAuthorized
	// (s.notAuthorized); else s.endSession(c) (it sends the 125s), restart
	// the login clock (c.loginBy), and reply 124. Checked by TestEx7_2_Users.
	return lab.NotImplemented("7.2", "Server.logout")
}

// endSession logs c's user out, if it has one, and takes c out of its
// channel. The caller holds s.mu.
func (s *Server) endSession(c *conn) {
	// TODO(ex 7.2): take c out of s.members[c.channel] (and set c.channel to
	// 0); if c.user is set, delete its session, broadcast 125 to s.conns and
	// clear c.user. Checked by TestEx7_2_Users.
}

// getUser looks a user up by name (113 → 114).
func (s *Server) getUser(c *conn, m proto.GetUserRequest) error {
	// TODO(ex 7.2): under s.mu: no session is MsgNotAuthorized; an unknown
	// name is 100 MsgNoSuchUser(name); else 114. Checked by TestEx7_2_Users.
	return lab.NotImplemented("7.2", "Server.getUser")
}

// getUsers looks users up by id (111 → 112), in the order asked; unknown
// ids are left out and repeated ones repeated, as in the original.
func (s *Server) getUsers(c *conn, m proto.GetUsersRequest) error {
	// TODO(ex 7.2): under s.mu: no session is MsgNotAuthorized; else 112
	// with the users of m.UserIDs from s.usersID, in order, unknown ones left
	// out. Add up itemCost of each; past replyRoom answer 100
	// MsgReplyTooLarge. Reply after Unlock. Checked by TestEx7_2_Users.
	return lab.NotImplemented("7.2", "Server.getUsers")
}
