package load

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"
)

// ClosedLoop drives Clients clients, each with exactly one request
// outstanding: a client sends its next request when the previous reply
// arrives. This is how the course's original write-ups measured (N clients, M
// messages each). Its throughput is what the server sustains; its latencies
// are honest only while the server keeps up, because a stalled server also
// stalls the load (use FixedRate to see stalls).
type ClosedLoop struct {
	Clients   int           // number of concurrent clients, at least 1
	Requests  int           // requests per client; 0 = until Duration
	Duration  time.Duration // stop issuing after this long; 0 = until Requests
	NewClient NewClient     // sets up each client
	Progress  io.Writer     // one line per second while running; nil = quiet
}

// Run sets up every client, then runs them concurrently until each has
// issued Requests requests or Duration has passed, whichever comes first.
// Requests already issued when Duration passes finish and count. Cancelling
// ctx aborts the run: requests in flight are not counted, and Run returns
// what was recorded so far with ctx's error.
//
// Every request slot yields one outcome: a client whose request failed is
// closed and set up again for its next request, and a failed set-up counts as
// that request's failure ("setup: <kind>"). So without cancellation,
// Successes+Failures == Clients*Requests, less the requests of clients whose
// first set-up failed (those count one failure each and sit out).
func (c ClosedLoop) Run(ctx context.Context) (Result, error) {
	if err := c.validate(); err != nil {
		return Result{}, err
	}
	recs := newStripes(c.Clients)
	sessions, err := connectAll(ctx, c.Clients, c.NewClient, recs)
	if err != nil {
		return recs.result(0), err
	}

	start := time.Now()
	stop := make(chan struct{})
	if c.Duration > 0 {
		timer := time.AfterFunc(c.Duration, func() { close(stop) })
		defer timer.Stop()
	}
	prog := startProgress(c.Progress, int64(c.Clients)*int64(c.Requests), c.Duration, recs.counts)
	var wg sync.WaitGroup
	for _, s := range sessions {
		wg.Go(func() { c.loop(ctx, s, stop) })
	}
	wg.Wait()
	wall := time.Since(start)
	prog.end()
	return recs.result(wall), ctx.Err()
}

// loop is one client's life: request after request until a bound is reached.
func (c ClosedLoop) loop(ctx context.Context, s *session, stop <-chan struct{}) {
	defer s.close()
	for n := 0; c.Requests == 0 || n < c.Requests; n++ {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		default:
		}
		s.issue(ctx, time.Time{})
	}
}

func (c ClosedLoop) validate() error {
	switch {
	case c.Clients < 1:
		return errors.New("load: ClosedLoop needs at least one client")
	case c.NewClient == nil:
		return errors.New("load: ClosedLoop needs a NewClient")
	}
	return checkBounds(c.Requests, c.Duration)
}
