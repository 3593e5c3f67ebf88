package chatscale

import (
	"context"
	"errors"

	nats "github.com/nats-io/nats.go"

	"serverlab/tools/given/chatcore/proto"
)

// Name limits, in bytes, as chapter 07's defaults.
const (
	maxUserName    = 32
	maxChannelName = 64
)

// createUser registers a user (109 → 110) in the users bucket: the name is
// the key, created only if absent, so that two servers asked for one name
// at the same moment give it to one client.
func (s *Server) createUser(c *conn, m proto.CreateUserRequest) error {
	if !proto.ValidName(m.Name, maxUserName) {
		s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgInvalidName})
		return nil
	}
	if taken, err := s.nameTaken(m.Name); err != nil || taken {
		if taken {
			s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgUserExists})
		}
		return err
	}
	hash, refused, err := s.hashNewPassword(c, m)
	if refused || err != nil {
		return err
	}
	ctx, cancel := s.requestContext()
	defer cancel()
	gen := s.admit().logins.generation()          // before the id is handed out (see loginMemo)
	id, err := s.createUserKey(ctx, m.Name, hash) // settles a race for a free name
	if errors.Is(err, errExists) {
		s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgUserExists})
		return nil
	}
	if err != nil {
		return err
	}
	u := proto.User{ID: id, Name: m.Name}
	s.mu.Lock()
	if s.admit().logins.generation() == gen { // else forgetUsers ran meanwhile: id is the old bucket's
		s.users[id] = u
	}
	s.mu.Unlock()
	s.registered(gen, id, m.Password)
	s.reply(c, proto.CreateUserResponse{RequestID: m.RequestID, User: u})
	return nil
}

// nameTaken reports whether a user of that name exists, so that
// registering a taken name is answered at once, without a hash and without
// spending the address's registrations (chapter 07's createUser does the
// same). Every run of the original load tester registers its testers again
// and takes "User already exists." as its cue to log in: hashing first made
// a rerun at 450 clients cost 451 hashes, 7–9 s of the tester's 10 s here,
// and one run in three timed out (docs/chatcore.md §8).
func (s *Server) nameTaken(name string) (bool, error) {
	ctx, cancel := s.requestContext()
	defer cancel()
	_, _, err := s.lookupUser(ctx, name)
	if errors.Is(err, errNotFound) {
		return false, nil
	}
	return err == nil, err
}

// authenticate logs the connection in (115 → 116, then 126 to every
// connection of every server). A user is logged in once across all the
// servers: the session's key is created only if absent.
func (s *Server) authenticate(c *conn, m proto.AuthenticateRequest) error {
	if s.session(c).ID != 0 {
		s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgAlreadyLoggedIn})
		return nil
	}
	ctx, cancel := s.requestContext()
	defer cancel()
	// The users bucket must be the one this server knows before a
	// session is opened under one of its ids: a bucket made again (NATS
	// wiped, see checkUsers) first ends the sessions of the old one, the
	// login memo with them. Left to the session keeper's next check, a
	// user who registered in the new bucket and logged in meanwhile was
	// ended with the old sessions, and a new user could be logged in
	// with the password the memo held for an old user of the same id.
	if err := s.nats.checkUsers(ctx, s.dropSessions); err != nil {
		return err
	}
	gen := s.admit().logins.generation() // before the user is read (see loginMemo)
	u, hash, err := s.lookupUser(ctx, m.Name)
	if err != nil && !errors.Is(err, errNotFound) {
		return err
	}
	match := false
	if err == nil {
		var refused bool
		if match, refused = s.checkLogin(c, m, u.ID, hash, gen); refused {
			return nil
		}
	}
	if !match {
		s.wrongPassword(c, m.RequestID)
		return nil
	}
	lease, err := s.claimSession(ctx, u.ID)
	if err == nil && lease == 0 && s.sessionKeyGone(ctx, u.ID) {
		lease, err = s.claimSession(ctx, u.ID)
	}
	if err != nil {
		return err
	}
	if lease == 0 {
		s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgUserLoggedIn(m.Name)})
		return nil
	}
	s.mu.Lock()
	if s.closed || c.user.ID != 0 {
		s.mu.Unlock()
		s.releaseSession(u.ID, lease)
		return errors.New("connection ended while logging in")
	}
	s.sessions[u.ID], s.leases[u.ID], c.user = c, lease, u
	s.reply(c, proto.AuthenticateResponse{RequestID: m.RequestID, User: u})
	ev := s.eventLocked(0, proto.UserLoginEvent{UserID: u.ID})
	s.mu.Unlock()
	s.publishEvent(ev)
	return nil
}

// sessionKeyGone reports whether the leader has no session key for user
// id (none, or a delete marker), for a login whose claim was refused as
// existing. NATS may refuse a Create so while it expires the key's older
// messages ("wrong last sequence: 0", which reads as "the key exists"): with
// a short SessionTTL, users who logged out and in again in a loop were told
// they were "already logged in" by a server that had no session for them.
// Such a refusal is claimed once more.
func (s *Server) sessionKeyGone(ctx context.Context, id uint32) bool {
	_, err := s.nats.leaderEntry(ctx, sessionsBucket, sessionKey(id), 0)
	return errors.Is(err, errNotFound)
}

// logout ends the session (123): 125 to everyone, then 124 once the
// session's key is released.
func (s *Server) logout(c *conn, m proto.LogoutRequest) error {
	s.mu.Lock()
	if c.user.ID == 0 {
		s.mu.Unlock()
		s.notAuthorized(c, m.RequestID)
		return nil
	}
	ended := s.endSessionLocked(c)
	s.mu.Unlock()
	s.publishEvent(ended.event)
	// The key goes before the answer: a client told "logged out" may log
	// in on any server at once.
	s.releaseEndedSession(ended.user, ended.lease)
	s.reply(c, proto.LogoutResponse{RequestID: m.RequestID})
	return nil
}

// endedSession is what is left to do, after s.mu is released, when a
// session ends: publish its 125 for the other servers and release its key.
type endedSession struct {
	user  uint32 // 0: there was no session
	lease uint64 // its key's revision; 0: the key is not this server's
	event *nats.Msg
}

// endSessionLocked logs c's user out on this server, if it has one (125 to
// this server's connections), and takes c out of its channel. The caller
// holds s.mu.
func (s *Server) endSessionLocked(c *conn) endedSession {
	if ch := c.channel; ch != 0 {
		delete(s.members[ch], c)
		c.channel = 0
	}
	id := c.user.ID
	if id == 0 {
		return endedSession{}
	}
	lease := s.leases[id]
	delete(s.sessions, id)
	delete(s.leases, id)
	// The 125 goes out while c still has its user: it is about c's own
	// session, which no presence budget holds back.
	ev := s.eventLocked(0, proto.UserLogoutEvent{UserID: id})
	c.user = proto.User{}
	return endedSession{user: id, lease: lease, event: ev}
}

// getUser looks a user up by name (113 → 114), in the bucket.
func (s *Server) getUser(c *conn, m proto.GetUserRequest) error {
	if s.session(c).ID == 0 {
		s.notAuthorized(c, m.RequestID)
		return nil
	}
	ctx, cancel := s.requestContext()
	defer cancel()
	u, _, err := s.lookupUser(ctx, m.Name)
	if errors.Is(err, errNotFound) {
		s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgNoSuchUser(m.Name)})
		return nil
	}
	if err != nil {
		return err
	}
	s.reply(c, proto.GetUserResponse{RequestID: m.RequestID, User: u})
	return nil
}

// maxUserIDs bounds the ids of one GetUsers (as chapter 07's default).
const maxUserIDs = 1000

// getUsers looks users up by id (111 → 112), in the order asked; unknown
// ids are left out.
func (s *Server) getUsers(c *conn, m proto.GetUsersRequest) error {
	if s.session(c).ID == 0 {
		s.notAuthorized(c, m.RequestID)
		return nil
	}
	if len(m.UserIDs) > maxUserIDs {
		s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgTooManyIDs})
		return nil
	}
	ctx, cancel := s.requestContext()
	defer cancel()
	users := make([]proto.User, 0, len(m.UserIDs))
	for _, id := range m.UserIDs {
		u, err := s.userByID(ctx, id)
		if errors.Is(err, errNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		users = append(users, u)
	}
	s.reply(c, proto.GetUsersResponse{RequestID: m.RequestID, Users: users})
	return nil
}

// lookupUser reads a user and its password hash from the bucket.
func (s *Server) lookupUser(ctx context.Context, name string) (proto.User, string, error) {
	if !proto.ValidName(name, maxUserName) {
		return proto.User{}, "", errNotFound
	}
	e, err := s.nats.leaderEntry(ctx, usersBucket, userKey(name), 0)
	if err != nil {
		return proto.User{}, "", err
	}
	return proto.User{ID: uint32(e.rev), Name: name}, string(e.value), nil
}

// userByID finds a user by id: in the cache, or else as the revision of
// the users bucket that created it (a revision is a sequence of the
// bucket's stream, so it is read back by number).
func (s *Server) userByID(ctx context.Context, id uint32) (proto.User, error) {
	s.mu.Lock()
	u, ok := s.users[id]
	s.mu.Unlock()
	if ok {
		return u, nil
	}
	name, err := s.nameAt(ctx, usersBucket, id)
	if err != nil {
		return proto.User{}, err
	}
	u = proto.User{ID: id, Name: name}
	s.mu.Lock()
	s.users[id] = u
	s.mu.Unlock()
	return u, nil
}
