package load_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"serverlab/tools/loadgen/load"
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
		if err != nil {
			t.Fatal(err)
		}
		for id := range clients {
			if f.calls[id] != requests {
				t.Errorf("client %d: %d requests, want %d", id, f.calls[id], requests)
			}
		}
		if res.Successes != clients*requests || res.Failures != 0 {
			t.Errorf("result: %d ok, %d failed; want %d ok, 0 failed", res.Successes, res.Failures, clients*requests)
		}
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
		if err != nil {
			t.Fatal(err)
		}
		// A request is issued at every multiple of service below duration,
		// and the last one issued finishes.
		perClient := int((duration + service - 1) / service)
		wantWall := time.Duration(perClient) * service
		if got := f.totalCalls(); got != clients*perClient || res.Successes != int64(got) {
			t.Errorf("%d clients, %v requests for %v: %d calls, %d successes; want %d",
				clients, service, duration, got, res.Successes, clients*perClient)
		}
		if res.Wall != wantWall || time.Since(start) != wantWall {
			t.Errorf("wall time: result %v, measured %v; want %v", res.Wall, time.Since(start), wantWall)
		}
		if res.P50 != service || res.Max != service {
			t.Errorf("latency of %v requests: p50 %v max %v", service, res.P50, res.Max)
		}
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
		if err != nil {
			t.Fatal(err)
		}
		wantErrors := map[string]int64{load.KindBadReply: 1, load.KindReset: 1, "setup: " + load.KindRefused: 1}
		if !equalCounts(res.Errors, wantErrors) || res.Successes+res.Failures != clients*requests {
			t.Errorf("result: %d ok, %d failed %v; want %d outcomes with errors %v",
				res.Successes, res.Failures, res.Errors, clients*requests, wantErrors)
		}
		// The refused set-up used up one of client 2's request slots.
		wantCalls := map[int]int{0: requests, 1: requests, 2: requests - 1}
		wantSetups := map[int]int{0: 1, 1: 2, 2: 3}
		for id := range clients {
			if f.calls[id] != wantCalls[id] || f.setups[id] != wantSetups[id] {
				t.Errorf("client %d: %d requests, %d set-ups; want %d and %d",
					id, f.calls[id], f.setups[id], wantCalls[id], wantSetups[id])
			}
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
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]int64{"setup: refused": 1}
			if res.Successes != (clients-1)*requests || !equalCounts(res.Errors, want) || f.setups[1] != 1 {
				t.Errorf("client 1 of %d refused: %d ok, errors %v, %d set-ups of client 1; want %d ok, %v, 1",
					clients, res.Successes, res.Errors, f.setups[1], (clients-1)*requests, want)
			}
			f.checkClean(t)
		})
	})
	t.Run("all clients", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			const clients = 3
			f := newFleet()
			f.setup = func(id, n int) error { return refused }
			res, err := load.ClosedLoop{Clients: clients, Requests: 5, NewClient: f.NewClient}.Run(t.Context())
			if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Errorf("every set-up refused: Run error %v, want one wrapping ECONNREFUSED", err)
			}
			if res.Failures != clients || f.totalCalls() != 0 {
				t.Errorf("every set-up refused: %d failures, %d requests; want %d and 0", res.Failures, f.totalCalls(), clients)
			}
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
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run after cancel: error %v, want context.Canceled", err)
		}
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
