package chatscale

import (
	"context"
	"time"
)

// keepSessions is the session keeper's goroutine: every SessionTTL/3 it
// refreshes the keys of this server's sessions, so that they outlive the
// bucket's TTL while this server lives, and expire within SessionTTL when
// it dies.
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
		ctx, cancel := s.requestContext()
		if err := s.refreshSessions(ctx); err != nil {
			s.log.Warn("refreshing sessions", "err", err)
		}
		cancel()
	}
}

// refreshSessions writes the key of every session on this server again,
// which makes it young again. A session that ended meanwhile must not come
// back: its key is deleted again after the write.
func (s *Server) refreshSessions(ctx context.Context) error {
	// TODO(ex 8.5): Done when: the key of every session of this server
	// (s.sessions, read under s.mu, then released) is written again, so that
	// it stays younger than the bucket's TTL while this server lives; a
	// session that ended while its key was being written does not come back
	// (its key is released again); the first error is returned. Checked by
	// TestEx8_5_Sessions.
	return nil
}

// releaseTimeout bounds releasing one session's key: a server whose NATS
// is down leaves the key to expire.
const releaseTimeout = time.Second

// releaseSession deletes a session's key, so that the user may log in on
// any server at once. id 0 is no session.
func (s *Server) releaseSession(id uint32) {
	if id == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	if err := s.nats.sessions.Delete(ctx, sessionKey(id)); err != nil {
		s.log.Warn("releasing a session", "user", id, "err", err)
	}
}
