package load_test

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"serverlab/tools/internal/load"
)

func TestClosedLoopIssuesClientsTimesRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const clients, requests = 5, 20
		f := newFleet()
		// Every client's first request waits until all clients are in
		// one: if the driver ran the clients one after another, this would
		// deadlock and synctest would fail the test.
		arrived := make(chan struct{}, clients)
		allIn := make(chan struct{})
		go func() {
			for range clients {
				<-arrived
			}
			close(allIn)
		}()
		f.do = func(ctx context.Context, id, n int) error {
			if n == 0 {
				arrived <- struct{}{}
				<-allIn
			}
			return nil
		}
		res, err := load.ClosedLoop{Clients: clients, Requests: requests, NewClient: f.NewClient}.Run(t.Context())
		require.NoError(t, err)
		for id := range clients {
			assert.Equal(t, requests, f.calls[id], "client %d: requests", id)
		}
		assert.Equal(t, int64(clients*requests), res.Successes, "result: ok")
		assert.Zero(t, res.Failures, "result: failed")
		f.checkClean(t)
	})
}

func TestClosedLoopStopsAfterDuration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const clients = 2
		const service, duration = 7 * time.Millisecond, time.Second
		f := newFleet()
		f.do = func(ctx context.Context, id, n int) error {
			time.Sleep(service) // the simulated server's work, in fake time
			return nil
		}
		start := time.Now()
		res, err := load.ClosedLoop{Clients: clients, Duration: duration, NewClient: f.NewClient}.Run(t.Context())
		require.NoError(t, err)
		// A request is issued at every multiple of service below duration,
		// and the last one issued finishes.
		perClient := int((duration + service - 1) / service)
		wantWall := time.Duration(perClient) * service
		assert.Equal(t, clients*perClient, f.totalCalls(), "%d clients, %v requests for %v: calls", clients, service, duration)
		assert.Equal(t, int64(clients*perClient), res.Successes, "%d clients, %v requests for %v: successes", clients, service, duration)
		assert.Equal(t, wantWall, res.Wall, "wall time in the result")
		assert.Equal(t, wantWall, time.Since(start), "wall time measured")
		assert.Equal(t, service, res.P50, "p50 latency of %v requests", service)
		assert.Equal(t, service, res.Max, "max latency of %v requests", service)
		f.checkClean(t)
	})
}

func TestClosedLoopReplacesClientAfterFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const clients, requests = 3, 10
		reset := &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}
		refused := &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}
		f := newFleet()
		f.do = func(ctx context.Context, id, n int) error {
			switch {
			case id == 1 && n == 4:
				return fmt.Errorf("%w: sent ping, got pong", load.ErrBadReply)
			case id == 2 && n == 7:
				return reset
			}
			return nil
		}
		// Client 2's first reconnection is refused; its second succeeds.
		f.setup = func(id, n int) error {
			if id == 2 && n == 1 {
				return refused
			}
			return nil
		}
		res, err := load.ClosedLoop{Clients: clients, Requests: requests, NewClient: f.NewClient}.Run(t.Context())
		require.NoError(t, err)
		wantErrors := map[string]int64{load.KindBadReply: 1, load.KindReset: 1, "setup: " + load.KindRefused: 1}
		assert.Equal(t, wantErrors, res.Errors, "result: errors by kind")
		assert.Equal(t, int64(clients*requests), res.Successes+res.Failures, "result: outcomes (%d ok, %d failed)", res.Successes, res.Failures)
		// The refused set-up used up one of client 2's request slots.
		wantCalls := map[int]int{0: requests, 1: requests, 2: requests - 1}
		wantSetups := map[int]int{0: 1, 1: 2, 2: 3}
		for id := range clients {
			assert.Equal(t, wantCalls[id], f.calls[id], "client %d: requests", id)
			assert.Equal(t, wantSetups[id], f.setups[id], "client %d: set-ups", id)
		}
		f.checkClean(t)
	})
}

func TestClosedLoopSetupFailures(t *testing.T) {
	refused := &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}
	t.Run("some clients", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			const clients, requests = 4, 5
			f := newFleet()
			f.setup = func(id, n int) error {
				if id == 1 {
					return refused
				}
				return nil
			}
			res, err := load.ClosedLoop{Clients: clients, Requests: requests, NewClient: f.NewClient}.Run(t.Context())
			require.NoError(t, err)
			assert.Equal(t, int64((clients-1)*requests), res.Successes, "client 1 of %d refused: ok", clients)
			assert.Equal(t, map[string]int64{"setup: refused": 1}, res.Errors, "client 1 of %d refused: errors", clients)
			assert.Equal(t, 1, f.setups[1], "client 1 of %d refused: set-ups of client 1", clients)
			f.checkClean(t)
		})
	})
	t.Run("all clients", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			const clients = 3
			f := newFleet()
			f.setup = func(id, n int) error { return refused }
			res, err := load.ClosedLoop{Clients: clients, Requests: 5, NewClient: f.NewClient}.Run(t.Context())
			assert.ErrorIs(t, err, syscall.ECONNREFUSED, "every set-up refused: Run")
			assert.Equal(t, int64(clients), res.Failures, "every set-up refused: failures")
			assert.Zero(t, f.totalCalls(), "every set-up refused: requests")
		})
	})
}

func TestClosedLoopCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		stuck := make(chan struct{})
		f := newFleet()
		f.do = func(ctx context.Context, id, n int) error {
			if id == 0 && n == 5 {
				close(stuck)
				<-ctx.Done() // a server that never answers
				return ctx.Err()
			}
			time.Sleep(time.Millisecond)
			return nil
		}
		done := make(chan struct{})
		var res load.Result
		var err error
		go func() {
			res, err = load.ClosedLoop{Clients: 3, Duration: time.Hour, NewClient: f.NewClient}.Run(ctx)
			close(done)
		}()
		<-stuck
		cancel()
		<-done
		assert.ErrorIs(t, err, context.Canceled, "Run after cancel")
		if res.Failures != 0 || res.Successes == 0 {
			t.Errorf("Run after cancel: %d ok, %d failed %v; want the completed requests and no failure for the aborted one",
				res.Successes, res.Failures, res.Errors)
		}
		f.checkClean(t)
	})
}

func TestDriversRejectUnboundedRuns(t *testing.T) {
	f := newFleet()
	runs := map[string]func() error{
		"closed loop without bounds": func() error {
			_, err := load.ClosedLoop{Clients: 1, NewClient: f.NewClient}.Run(t.Context())
			return err
		},
		"closed loop without clients": func() error {
			_, err := load.ClosedLoop{Requests: 1, NewClient: f.NewClient}.Run(t.Context())
			return err
		},
		"fixed rate without bounds": func() error {
			_, err := load.FixedRate{Rate: 10, Clients: 1, NewClient: f.NewClient}.Run(t.Context())
			return err
		},
		"fixed rate without rate": func() error {
			_, err := load.FixedRate{Requests: 10, Clients: 1, NewClient: f.NewClient}.Run(t.Context())
			return err
		},
		"fixed rate with cap below clients": func() error {
			_, err := load.FixedRate{Rate: 10, Requests: 10, Clients: 4, MaxInFlight: 2, NewClient: f.NewClient}.Run(t.Context())
			return err
		},
	}
	for name, run := range runs {
		if err := run(); err == nil {
			t.Errorf("%s: Run returned no error", name)
		}
	}
	if len(f.setups) != 0 {
		t.Errorf("invalid runs set up %d clients, want none", len(f.setups))
	}
}
