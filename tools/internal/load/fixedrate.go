package load

import (
	"context"
	"errors"
	"io"
	"math"
	"sync"
	"time"
)

// DefaultMaxInFlight is FixedRate's cap on outstanding requests when
// MaxInFlight is 0.
const DefaultMaxInFlight = 1000

// FixedRate drives open-loop load: requests arrive on a fixed schedule (the
// i-th at start + i/Rate) whether or not earlier ones were answered, and are
// served by Clients clients (connections), each with one request outstanding.
// An arrival that finds every client busy waits for one, and its latency is
// measured from its intended arrival time, not from when a client picked it
// up. That is what keeps a stall visible: a closed-loop generator stops
// sending while the server stalls, and records one slow request instead of
// the hundreds that arrived meanwhile (coordinated omission).
//
// The wait is bounded: an arrival that would make more than MaxInFlight
// requests outstanding (waiting or being served) is not issued and counts as
// a failure of kind KindInFlightCap.
type FixedRate struct {
	Rate        float64       // arrivals per second, > 0
	Requests    int           // total arrivals; 0 = until Duration
	Duration    time.Duration // arrivals stop after this long; 0 = until Requests
	Clients     int           // clients serving the arrivals, at least 1
	MaxInFlight int           // cap on outstanding requests, >= Clients; 0 = max(Clients, DefaultMaxInFlight)
	NewClient   NewClient     // sets up each client
	Progress    io.Writer     // one line per second while running; nil = quiet
}

// Run sets up every client, issues the arrivals on schedule, and returns once
// the last arrival has been answered. Cancelling ctx aborts the run: requests
// in flight or waiting are not counted, and Run returns what was recorded so
// far with ctx's error. A client whose request failed is closed and set up
// again, within the next request's latency.
func (f FixedRate) Run(ctx context.Context) (Result, error) {
	if err := f.validate(); err != nil {
		return Result{}, err
	}
	inFlight := f.MaxInFlight
	if inFlight == 0 {
		inFlight = max(f.Clients, DefaultMaxInFlight)
	}
	recs := newStripes(f.Clients)
	sessions, err := connectAll(ctx, f.Clients, f.NewClient, recs)
	if err != nil {
		return recs.result(0), err
	}

	// A token per outstanding request: the dispatcher takes one per arrival
	// and a client gives it back when the reply is in, so the queue (sized
	// like the tokens) never blocks the dispatcher.
	tokens := make(chan struct{}, inFlight)
	queue := make(chan time.Time, inFlight)
	overflow := NewRecorder()
	all := append(stripes{overflow}, recs...)
	prog := startProgress(f.Progress, f.arrivals(), f.Duration, all.counts)

	start := time.Now()
	var wg sync.WaitGroup
	for _, s := range sessions {
		wg.Go(func() {
			defer s.close()
			for due := range queue {
				s.issue(ctx, due)
				<-tokens
			}
		})
	}
	f.dispatch(ctx, start, queue, tokens, overflow)
	close(queue)
	wg.Wait()
	wall := time.Since(start)
	prog.end()
	return all.result(wall), ctx.Err()
}

// dispatch puts each arrival on the queue at its due time, or records it as
// over the cap. Due times are computed from start, not from the previous
// arrival, so timer lateness never accumulates into a lower rate.
func (f FixedRate) dispatch(ctx context.Context, start time.Time, queue chan<- time.Time, tokens chan struct{}, overflow *Recorder) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for i := 0; f.Requests == 0 || i < f.Requests; i++ {
		offset := time.Duration(float64(i) * float64(time.Second) / f.Rate)
		if f.Duration > 0 && offset >= f.Duration {
			return
		}
		due := start.Add(offset)
		if wait := time.Until(due); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
		} else if ctx.Err() != nil {
			return
		}
		select {
		case tokens <- struct{}{}:
			queue <- due
		default:
			overflow.Fail(ErrInFlightCap)
		}
	}
}

// arrivals returns how many requests the schedule holds: Requests, or the
// number of multiples of 1/Rate below Duration, whichever is smaller.
func (f FixedRate) arrivals() int64 {
	n := int64(f.Requests)
	if f.Duration > 0 {
		byTime := int64(math.Ceil(f.Duration.Seconds() * f.Rate))
		if n == 0 || byTime < n {
			n = byTime
		}
	}
	return n
}

func (f FixedRate) validate() error {
	switch {
	case !(f.Rate > 0):
		return errors.New("load: FixedRate needs a rate > 0")
	case f.Clients < 1:
		return errors.New("load: FixedRate needs at least one client")
	case f.MaxInFlight != 0 && f.MaxInFlight < f.Clients:
		return errors.New("load: FixedRate's MaxInFlight must be at least Clients")
	case f.NewClient == nil:
		return errors.New("load: FixedRate needs a NewClient")
	}
	return checkBounds(f.Requests, f.Duration)
}
