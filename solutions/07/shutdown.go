package chatcore

import (
	"time"

	"serverlab/tools/given/chatcore/proto"
)

// shutdown handles 102. Only an administrator (Config.Admins) may stop the
// server; anyone else is told "Not allowed." and nothing happens. (In the
// original any logged-in user could stop it.) There is no reply: the
// connection ends with the shutdown notice every client gets.
func (s *Server) shutdown(c *conn) error {
	u := s.session(c)
	switch {
	case u == nil:
		s.reply(c, proto.Error{Value: proto.MsgNotAuthorized})
	case !s.admins[u.name]:
		c.log.Warn("shutdown refused", "user", u.name)
		s.reply(c, proto.Error{Value: proto.MsgNotAllowed})
	default:
		c.log.Info("shutdown requested", "user", u.name)
		go s.Close() // not from this goroutine: Close waits for it
	}
	return nil
}

// aLongTimeAgo is a deadline in the past: setting it makes a blocked Read
// return at once, the way net/http interrupts its connections.
var aLongTimeAgo = time.Unix(1, 0)

// Close stops the server gracefully and waits for every goroutine it
// started. It is safe to call more than once and from several goroutines:
// every call returns once the first has finished. The order matters:
//
//  1. stop accepting (close the listener) and mark the server closing;
//  2. interrupt every reader (a past read deadline); a reader in the middle
//     of a request finishes it — a chat message waits for its commit;
//  3. wait for the readers: no new message can reach the committer now;
//  4. close the committer's queue and wait for it: the last batch is
//     committed and delivered;
//  5. queue "Server shutting down." (101) for every connection, let the
//     writers flush for at most ShutdownGrace, then close the sockets;
//  6. close the store.
func (s *Server) Close() error {
	s.closeOnce.Do(s.close)
	return nil
}

func (s *Server) close() {
	s.mu.Lock()
	s.closed = true
	s.closing.Store(true)
	close(s.done)
	if s.ln != nil {
		s.ln.Close()
	}
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	committed := s.committed
	s.mu.Unlock()

	for _, c := range conns {
		c.nc.SetReadDeadline(aLongTimeAgo)
	}
	s.readers.Wait()
	if committed != nil {
		close(s.appends)
		<-committed
	}
	s.notifyAndFlush(conns)
	if err := s.store.Close(); err != nil {
		s.log.Error("closing the store", "err", err)
	}
	s.log.Info("chatcore stopped")
}

// notifyAndFlush sends the shutdown notice to every connection and waits
// for the writers to send what they hold, for at most ShutdownGrace.
func (s *Server) notifyAndFlush(conns []*conn) {
	notice, _ := proto.Encode(proto.Error{Value: proto.MsgShuttingDown})
	for _, c := range conns {
		c.out.push(notice) // fails harmlessly if c was dropped or had ended
		c.out.finish()
	}
	force := time.AfterFunc(s.cfg.ShutdownGrace, func() {
		for _, c := range conns {
			c.nc.Close()
		}
	})
	s.writers.Wait()
	force.Stop()
}
