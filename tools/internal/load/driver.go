package load

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Client is one simulated user of a protocol: typically a connection and the
// state of a conversation on it. The drivers call its methods from one
// goroutine at a time, so it needs no locking.
type Client interface {
	// Do sends one request and waits for its reply. It returns an error if
	// the reply is late, missing or wrong (wrap ErrBadReply, or use WithKind
	// for a kind of your own). Do must return within the mode's timeout
	// (set a deadline on the connection), and promptly once ctx is done
	// (Dial arranges both ends of that for a net.Conn).
	Do(ctx context.Context) error
	// Close releases the client. After a failed Do the driver closes the
	// client and sets up a new one, because a connection that timed out may
	// still deliver the late reply and desynchronise every later request.
	Close() error
}

// NewClient sets up client number id (0-based), e.g. dials and logs in. ctx
// is the run's context: it stays live for the client's whole life, so a
// client may tie its connection to it (see Dial).
type NewClient func(ctx context.Context, id int) (Client, error)

// ClientFunc adapts a stateless request function to a Client with nothing to
// close, e.g. for an HTTP mode that shares one http.Client.
type ClientFunc func(ctx context.Context) error

// Do calls f.
func (f ClientFunc) Do(ctx context.Context) error { return f(ctx) }

// Close does nothing.
func (f ClientFunc) Close() error { return nil }

// setupParallelism bounds how many clients dial at once: a thousand
// simultaneous SYNs overflow a small listen backlog, and the retransmission a
// second later would then be measured as the server's fault.
const setupParallelism = 16

// session is one client slot of a run: it owns at most one Client and
// replaces it after a failure.
type session struct {
	id        int
	newClient NewClient
	client    Client
	rec       *Recorder
}

// issue performs one request and records its outcome. since is when the
// request's clock started (FixedRate: its intended arrival); zero means now,
// after any reconnection. A failure that happens because ctx is done is not
// counted: the run cut the request off, the server did not fail it.
func (s *session) issue(ctx context.Context, since time.Time) {
	if ctx.Err() != nil {
		return
	}
	if s.client == nil {
		c, err := s.newClient(ctx, s.id)
		if err != nil {
			if ctx.Err() == nil {
				s.rec.Fail(setupError(err))
			}
			return
		}
		s.client = c
	}
	if since.IsZero() {
		since = time.Now()
	}
	err := s.client.Do(ctx)
	elapsed := time.Since(since)
	if err != nil && ctx.Err() != nil {
		return
	}
	s.rec.Record(elapsed, err)
	if err != nil {
		s.close()
	}
}

// close closes the session's client, if any.
func (s *session) close() {
	if s.client != nil {
		s.client.Close()
		s.client = nil
	}
}

// connectAll sets up one session per client before the clock starts, so that
// connection set-up is not measured as request latency. A client that fails
// to set up is recorded ("setup: refused") and left out of the run; connectAll
// fails only if no client could be set up or ctx ended.
func connectAll(ctx context.Context, n int, newClient NewClient, recs stripes) ([]*session, error) {
	sessions := make([]*session, n)
	errs := make([]error, n)
	slots := make(chan struct{}, setupParallelism)
	var wg sync.WaitGroup
	for id := range n {
		sessions[id] = &session{id: id, newClient: newClient, rec: recs.of(id)}
		wg.Go(func() {
			select {
			case slots <- struct{}{}:
				defer func() { <-slots }()
			case <-ctx.Done():
				errs[id] = ctx.Err()
				return
			}
			sessions[id].client, errs[id] = newClient(ctx, id)
			if errs[id] == nil && sessions[id].client == nil {
				errs[id] = errors.New("load: NewClient returned neither a client nor an error")
			}
			if errs[id] != nil && ctx.Err() == nil {
				sessions[id].rec.Fail(setupError(errs[id]))
			}
		})
	}
	wg.Wait()

	live := sessions[:0]
	for _, s := range sessions {
		if s.client != nil {
			live = append(live, s)
		}
	}
	switch {
	case ctx.Err() != nil:
		closeAll(live)
		return nil, ctx.Err()
	case len(live) == 0:
		return nil, fmt.Errorf("none of %d clients could be set up: %w", n, errs[0])
	}
	return live, nil
}

func closeAll(sessions []*session) {
	for _, s := range sessions {
		s.close()
	}
}

// checkBounds enforces that every run stops by itself.
func checkBounds(requests int, duration time.Duration) error {
	switch {
	case requests < 0 || duration < 0:
		return errors.New("load: negative request count or duration")
	case requests == 0 && duration == 0:
		return errors.New("load: set a request count, a duration or both, so that the run ends")
	}
	return nil
}
