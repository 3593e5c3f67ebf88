package chatcore

import (
	"serverlab/tools/given/chatcore/proto"
)

// createUser registers a user (109 → 110). Nobody needs a session for it, as
// in the original. The password is stored only as its hash.
func (s *Server) createUser(c *conn, m proto.CreateUserRequest) error {
	// TODO(ex 7.2): Done when: a name that exists (in the caches, or the
	// store's ErrExists when two clients race for it) is answered 100 "User
	// already exists." and nothing changes; an address that has spent its
	// registration budget (Config.AddressRegistrations, refilled over
	// RegistrationWindow) is answered 100 "Too many registrations from your
	// address, try again later." before any hash, and each hash made spends
	// one of it (the given limiter s.registrations keeps the budget:
	// admission.go); otherwise the user is in the store
	// (durable), then in the caches s.users and s.usersID (which s.mu
	// protects), and in the login memo (so its first login needs no second
	// hash), and the answer is 110 with its id and name. The slow steps, the
	// hash and the store's INSERT, run without s.mu: nobody else waits for
	// them. Checked by TestEx7_2_Users.
	return notImplemented("7.2", "Server.createUser")
}

// authenticate logs the connection in (115 → 116, then 126 to every open
// connection). A connection carries one user, and a user is on one
// connection: a second login is refused, on the same connection ("Already
// logged in.") and on another ("<name> is already logged in."), and the
// existing session keeps going.
func (s *Server) authenticate(c *conn, m proto.AuthenticateRequest) error {
	// TODO(ex 7.2): Done when: a connection that has a user is refused with 100
	// "Already logged in."; a wrong password and an unknown name get the same
	// 100 "Wrong username or password" after the same work (the given
	// checkPassword, asked with no user for an unknown name, checks against
	// the dummy hash and counts failures; an error of its own is returned as
	// it is), and that check runs without s.mu; a user with a session on another
	// connection is refused with 100 "<name> is already logged in." and that
	// session goes on; otherwise the session is recorded (s.sessions, c.user),
	// c gets 116 and every open connection 126 (through broadcastPresenceLocked:
	// a connection whose presence budget is spent misses it, c never does). The test for another session
	// and the recording are one critical section under s.mu, so that two
	// simultaneous logins of one user cannot both succeed, and 116 and 126 are
	// queued in that same section, so that nobody sees them the other way
	// round. Checked by TestEx7_2_Users.
	return notImplemented("7.2", "Server.authenticate")
}

// logout ends the session (123): 125 to every connection, the requester
// included, then 124 to the requester. The connection leaves its channel
// without a 127, stays open, and may log in again.
func (s *Server) logout(c *conn, m proto.LogoutRequest) error {
	// TODO(ex 7.2): Done when: without a session the answer is 100 "Not
	// authorized."; with one, the session is ended as endSession ends it (125
	// to every open connection, the requester included), the connection has
	// LoginTimeout again to log in (c.loginBy), and then it gets 124, all under
	// s.mu so that its 125 comes before its 124. Checked by TestEx7_2_Users.
	return notImplemented("7.2", "Server.logout")
}

// endSession logs c's user out, if it has one, and takes c out of its
// channel. The caller holds s.mu.
func (s *Server) endSession(c *conn) {
	// TODO(ex 7.2): Done when: c is in no channel (not in any s.members set,
	// c.channel zero), and if it had a user, that user has no session, c has
	// none, and every open connection was sent 125 (through
	// broadcastPresenceLocked, c always included). Leaving the channel this
	// way sends no 127. The caller holds s.mu: queue, never wait. Checked by
	// TestEx7_2_Users.
}

// getUser looks a user up by name (113 → 114).
func (s *Server) getUser(c *conn, m proto.GetUserRequest) error {
	// TODO(ex 7.2): Done when: without a session the answer is 100 "Not
	// authorized."; an unknown name gets 100 with the protocol's text for it
	// (proto.MsgNoSuchUser); a known one 114 with its id and name, read from
	// the caches under s.mu, with no database call. Checked by TestEx7_2_Users.
	return notImplemented("7.2", "Server.getUser")
}

// getUsers looks users up by id (111 → 112), in the order asked; unknown
// ids are left out and repeated ones repeated, as in the original.
func (s *Server) getUsers(c *conn, m proto.GetUsersRequest) error {
	// TODO(ex 7.2): Done when: without a session the answer is 100 "Not
	// authorized."; otherwise 112 lists the users of the ids asked, in the
	// order asked, repeated ones repeated and unknown ones left out, read from
	// the caches under s.mu; a list whose items' itemCost passes replyRoom is
	// answered 100 "Reply too large." instead, and the reply is encoded after
	// s.mu is released. Checked by TestEx7_2_Users.
	return notImplemented("7.2", "Server.getUsers")
}
