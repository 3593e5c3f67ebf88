package load_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"serverlab/tools/internal/load"
)

// arrivalLog records when each request reached a client, in fake time since
// the run started.
type arrivalLog struct {
	mu    sync.Mutex
	start time.Time
	at    []time.Duration
}

func (l *arrivalLog) note() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.at = append(l.at, time.Since(l.start))
}

func TestFixedRateSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const rate, requests = 100.0, 7
		interval := time.Duration(float64(time.Second) / rate)
		log := &arrivalLog{start: time.Now()}
		f := newFleet()
		f.do = func(ctx context.Context, id, n int) error {
			log.note()
			time.Sleep(interval / 2) // served well within the interval
			return nil
		}
		res, err := load.FixedRate{Rate: rate, Requests: requests, Clients: 2, NewClient: f.NewClient}.Run(t.Context())
		require.NoError(t, err)
		want := make([]time.Duration, requests)
		for i := range want {
			want[i] = time.Duration(i) * interval
		}
		assert.Equal(t, want, log.at, "%d requests at %v/s: arrival times", requests, rate)
		assert.Equal(t, int64(requests), res.Successes, "result: ok")
		assert.Equal(t, interval/2, res.P50, "result: p50")
		assert.Equal(t, interval/2, res.Max, "result: max")
		f.checkClean(t)
	})
}

func TestFixedRateStopsAfterDuration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const rate, duration = 50.0, 2 * time.Second
		f := newFleet()
		res, err := load.FixedRate{Rate: rate, Duration: duration, Clients: 3, NewClient: f.NewClient}.Run(t.Context())
		require.NoError(t, err)
		want := int(duration.Seconds() * rate) // arrivals at 0, 1/rate, … below duration
		assert.Equal(t, want, f.totalCalls(), "%v/s for %v: requests", rate, duration)
		assert.Equal(t, int64(want), res.Successes, "%v/s for %v: ok", rate, duration)
		f.checkClean(t)
	})
}

// TestFixedRateTimesFromIntendedStart has one client that needs longer than
// the arrival interval, so requests queue. Their latency must include the
// wait: timing from when the client picked a request up would report every
// request as fast as the service time, hiding the backlog.
func TestFixedRateTimesFromIntendedStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const requests = 5
		const interval, service = 10 * time.Millisecond, 25 * time.Millisecond
		f := newFleet()
		f.do = func(ctx context.Context, id, n int) error {
			time.Sleep(service)
			return nil
		}
		res, err := load.FixedRate{
			Rate: float64(time.Second / interval), Requests: requests, Clients: 1, NewClient: f.NewClient,
		}.Run(t.Context())
		require.NoError(t, err)
		// Request i arrives at i*interval and finishes at (i+1)*service.
		want := make([]time.Duration, requests)
		for i := range want {
			want[i] = time.Duration(i+1)*service - time.Duration(i)*interval
		}
		checkLatencies(t, res, want)
		assert.Equal(t, requests*service, res.Wall, "wall")
	})
}

func TestFixedRateInFlightCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const requests, maxInFlight = 5, 2
		const interval, service = 10 * time.Millisecond, 25 * time.Millisecond
		f := newFleet()
		f.do = func(ctx context.Context, id, n int) error {
			time.Sleep(service)
			return nil
		}
		res, err := load.FixedRate{
			Rate: float64(time.Second / interval), Requests: requests, Clients: 1, MaxInFlight: maxInFlight,
			NewClient: f.NewClient,
		}.Run(t.Context())
		require.NoError(t, err)
		// Arrivals at 0, 10, 20, 30, 40 ms; replies at 25, 50, 75 ms. At 20 ms
		// two are outstanding (cap), at 30 ms one (accepted), at 40 ms two.
		wantOK, wantCapped := int64(3), int64(2)
		assert.Equal(t, wantOK, res.Successes, "%d arrivals, cap %d: ok", requests, maxInFlight)
		assert.Equal(t, wantCapped, res.Failures, "%d arrivals, cap %d: failed", requests, maxInFlight)
		assert.Equal(t, wantCapped, res.Errors[load.KindInFlightCap], "%d arrivals, cap %d: %q errors (all: %v)",
			requests, maxInFlight, load.KindInFlightCap, res.Errors)
		f.checkClean(t)
	})
}

func TestFixedRateCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		stuck := make(chan struct{})
		var once sync.Once
		f := newFleet()
		f.do = func(ctx context.Context, id, n int) error {
			if n == 3 {
				once.Do(func() { close(stuck) })
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		}
		done := make(chan struct{})
		var res load.Result
		var err error
		go func() {
			res, err = load.FixedRate{Rate: 1000, Duration: time.Hour, Clients: 2, NewClient: f.NewClient}.Run(ctx)
			close(done)
		}()
		<-stuck
		cancel()
		<-done
		assert.ErrorIs(t, err, context.Canceled, "Run after cancel")
		assert.NotZero(t, res.Successes, "Run after cancel: want some ok")
		assert.Zero(t, res.Failures, "Run after cancel: want none failed")
		f.checkClean(t)
	})
}

func TestProgressLines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const rate, duration = 100, 3 * time.Second
		var out bytes.Buffer
		f := newFleet()
		f.do = func(ctx context.Context, id, n int) error {
			time.Sleep(time.Millisecond) // replies never coincide with a tick
			return nil
		}
		res, err := load.FixedRate{Rate: rate, Duration: duration, Clients: 1, NewClient: f.NewClient, Progress: &out}.Run(t.Context())
		require.NoError(t, err)
		// The run ends just before 3s, so there is a line at 1s and at 2s.
		total := int(duration.Seconds() * rate)
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		require.Len(t, lines, 2, "progress over %v (%v)", duration, res.Wall)
		for i, line := range lines {
			done := (i + 1) * rate
			want := fmt.Sprintf("%4ds  %d/%d  %d req/s  0 errors", i+1, done, total, rate)
			assert.Equal(t, want, line, "progress line %d", i+1)
		}
	})
}
