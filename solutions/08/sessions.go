package chatscale

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// keepSessions is the session keeper's goroutine: every SessionTTL/3 it
// refreshes the keys of this server's sessions, so that they outlive the
// bucket's TTL while this server lives, and expire within SessionTTL when
// it dies. Each time it first checks that the users bucket is still the
// one this server knew (checkUsers).
func (s *Server) keepSessions() {
	t := time.NewTicker(s.cfg.SessionTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		case <-s.nats.reconnected:
			// NATS was away: a key may have aged past the TTL meanwhile.
		}
		// A users bucket made again (NATS wiped) ends every session here
		// before any key is written again; a failed read is the remake's
		// to deal with, and the refresh goes on, with a timeout of its own.
		ctx, cancel := s.requestContext()
		if err := s.nats.checkUsers(ctx, s.dropSessions); err != nil {
			s.nats.missing(err)
		}
		cancel()
		ctx, cancel = s.requestContext()
		s.keys.Lock()
		err := s.refreshSessions(ctx)
		s.keys.Unlock()
		if err != nil {
			s.log.Warn("refreshing sessions", "err", err)
			s.nats.missing(err)
		}
		cancel()
	}
}

// refreshSessions writes the key of every session on this server again,
// which makes it young again. Each write is an update of the revision this
// server wrote last (its lease), so that it never takes back a key that is
// no longer its own: a key another server created after this one's had
// expired (a partition: this server was cut off from NATS for longer than
// the TTL) stays the other server's — and this server ends its own copy of
// the session, so that a user is never logged in on two servers. A key
// that is simply gone (it expired while NATS was away) is created again,
// and a session that ended meanwhile does not come back.
func (s *Server) refreshSessions(ctx context.Context) error {
	s.mu.Lock()
	leases := make(map[uint32]uint64, len(s.leases))
	for id, rev := range s.leases {
		leases[id] = rev
	}
	s.mu.Unlock()
	var first error
	for id, rev := range leases {
		next, err := s.nats.sessions.Update(ctx, sessionKey(id), []byte(s.store.owner), rev)
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			// Not at the lease: gone (expired while NATS was away, or
			// deleted by a logout a moment ago), another server's, or
			// still ours at a revision a late reply moved it to. Created
			// again only if gone, adopted if ours; the check below
			// releases it if the session has ended.
			next, err = s.nats.sessions.Create(ctx, sessionKey(id), []byte(s.store.owner))
			if errors.Is(err, jetstream.ErrKeyExists) {
				next, err = s.ownRevision(ctx, id)
				if err == nil && next == 0 {
					s.loseSession(id, rev)
					continue
				}
			}
		}
		if err != nil {
			first = firstErr(first, err)
			continue
		}
		s.mu.Lock()
		_, still := s.leases[id]
		if still && s.leases[id] == rev {
			s.leases[id] = next
		}
		s.mu.Unlock()
		if !still {
			s.releaseSession(id, next) // ended while its key was written
		}
	}
	return first
}

// ownRevision reads the session key of user id from the bucket's leader
// and returns its revision if the key holds this server's owner id, 0 if it
// holds another's. A refresh whose reply came late (or never) has moved
// the key on while this server kept the revision before it: the next
// refresh then fails on the revision, and the key is still ours. Ending the
// session there told a lone server's users they had been "taken over by
// another server"; this adopts the key's revision instead.
func (s *Server) ownRevision(ctx context.Context, id uint32) (uint64, error) {
	e, err := s.nats.leaderEntry(ctx, sessionsBucket, sessionKey(id), 0)
	if errors.Is(err, errNotFound) {
		return 0, errors.New("chatscale: a session key gone and back between two reads") // the next refresh sees which
	}
	if err != nil {
		return 0, err
	}
	if string(e.value) != s.store.owner {
		return 0, nil
	}
	return e.rev, nil
}

// firstErr keeps the first error of several.
func firstErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// loseSession ends the session of user id on this server if its lease is
// still rev: its key is someone else's now. The connection is closed (its
// client logs in again, and learns where the user is logged in); the key
// is left alone.
func (s *Server) loseSession(id uint32, rev uint64) {
	s.mu.Lock()
	c := s.sessions[id]
	if c == nil || s.leases[id] != rev {
		s.mu.Unlock()
		return
	}
	delete(s.leases, id) // disconnect must not release a key not ours
	s.mu.Unlock()
	s.log.Warn("a session's key was taken over by another server (this one was cut off from NATS): ending it here", "user", id)
	c.nc.Close()
}

// releaseEndedSession releases the key of a session that has just ended
// (a logout, a connection gone) once a refresh under way is done. That
// refresh may write the key after the session ended — make it again after
// the release, or move it past lease so that the release misses — and it
// deletes what it wrote only when it sees the session gone: released any
// earlier, the key was still there when the logout was answered, and the
// user's next login was refused "already logged in" (26 in 35,000 re-logins
// with a TTL of 3 s). The wait is bounded: a refresh's calls share one
// RequestTimeout.
func (s *Server) releaseEndedSession(id uint32, lease uint64) {
	if id == 0 || lease == 0 {
		return
	}
	s.keys.RLock()
	defer s.keys.RUnlock()
	s.releaseSession(id, lease)
}

// releaseTimeout bounds releasing one session's key: a server whose NATS
// is down leaves the key to expire (or to its next run to clear).
const releaseTimeout = time.Second

// releaseSession deletes a session's key if it is still at revision rev
// (this server's lease), so that the user may log in on any server at
// once. id 0 or rev 0 is no session.
func (s *Server) releaseSession(id uint32, rev uint64) {
	if id == 0 || rev == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	if err := s.nats.sessions.Delete(ctx, sessionKey(id), jetstream.LastRevision(rev)); err != nil {
		s.log.Warn("releasing a session", "user", id, "err", err)
	}
}

// clearOldSessions deletes the session keys this server's previous run
// left (its owner id is theirs): that run is over — the store's lock says
// so — and its users must not wait for the keys to expire to log in again.
func (s *Server) clearOldSessions() error {
	ctx, cancel := context.WithTimeout(s.ctx, setUpTimeout)
	defer cancel()
	w, err := s.nats.sessions.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return fmt.Errorf("read the sessions: %w", err)
	}
	defer w.Stop()
	var old []jetstream.KeyValueEntry
read:
	for {
		select {
		case e := <-w.Updates():
			if e == nil {
				break read // every key that exists has come
			}
			if string(e.Value()) == s.store.owner {
				old = append(old, e)
			}
		case <-ctx.Done():
			return fmt.Errorf("read the sessions: %w", ctx.Err())
		}
	}
	for _, e := range old {
		if err := s.nats.sessions.Delete(ctx, e.Key(), jetstream.LastRevision(e.Revision())); err != nil {
			s.log.Warn("clearing a session of this server's previous run", "key", e.Key(), "err", err)
		}
	}
	if len(old) > 0 {
		s.log.Info("cleared the sessions of this server's previous run", "sessions", len(old))
	}
	return nil
}
