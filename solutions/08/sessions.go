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
	s.mu.Lock()
	ids := make([]uint32, 0, len(s.sessions))
	for id := range s.sessions {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	for _, id := range ids {
		if _, err := s.nats.sessions.Put(ctx, sessionKey(id), []byte(s.node)); err != nil {
			return err
		}
		s.mu.Lock()
		_, still := s.sessions[id]
		s.mu.Unlock()
		if !still {
			s.releaseSession(id)
		}
	}
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
