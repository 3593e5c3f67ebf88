package jobtest

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/jobs"
	"serverlab/tools/given/lab"
)

// Shutdown checks exercise 3.6: Close in the original's order. With a job
// running and the queue full: the listener closes, a reader blocked in Put
// answers "server shutting down", the queued jobs still run and are
// answered, and only then does Close return, with no goroutine left.
func Shutdown(t *testing.T, impl Impl) {
	k := testkit.New(t, "3.6")
	k.Run("ordered", func(t *testing.T) { checkOrderedShutdown(testkit.New(t, k.Exercise()), impl) })
	k.Run("contract", func(t *testing.T) {
		ck := testkit.New(t, k.Exercise())
		requireQueueAndPool(ck, impl)
		ck.CheckContract(testkit.Contract{
			New: func(log *slog.Logger) lab.Server {
				raw, err := impl.NewServer(Config{Workers: 2, QueueCap: 4, Logger: log})
				if err != nil {
					ck.Fatalf("NewServer: %v", err)
				}
				return raw
			},
			Probe: func(k *testkit.T, addr string) {
				expectAnyID(k, k.DialAddr(addr), "HASH a", ok("", jobs.HashResult(jobs.Hash("a"))))
			},
			SeveralListeners: true, // Serve records each listener, and Close closes them all
		})
	})
	k.Run("close-with-non-reader", func(t *testing.T) { checkCloseWithNonReader(testkit.New(t, k.Exercise()), impl) })
	k.Run("close-waits-for-workers", func(t *testing.T) { checkCloseWaitsForWorkers(testkit.New(t, k.Exercise()), impl) })
	k.Run("close-during-backoff", func(t *testing.T) {
		ck := testkit.New(t, k.Exercise())
		requireQueueAndPool(ck, impl)
		raw, err := impl.NewServer(Config{Workers: 2, QueueCap: 4})
		if err != nil {
			ck.Fatalf("NewServer: %v", err)
		}
		ck.CheckCloseDuringBackoff(raw)
	})
}

// checkOrderedShutdown: Close in the original's order, with a job running,
// the queue full and a reader waiting in Put.
func checkOrderedShutdown(k *testkit.T, impl Impl) {
	k.Helper()
	const workers, queueCap = 1, 4
	h := newHolder(2)
	k.OnAbort(h.releaseAll)
	defer h.releaseAll()
	// Line 1 from the idle client, 6 from the busy one.
	lines := newLineCounter(1 + workers + queueCap + 1)
	raw, srv := newServer(k, impl, Config{Workers: workers, QueueCap: queueCap, Logger: slowDebugLogger(),
		OnJobStart: h.onJobStart, OnLineRead: lines.onLineRead})

	idle := k.Dial(srv)
	roundTrip(idle, ok("HASH idle", jobs.HashResult(jobs.Hash("idle"))), 1)
	partial := k.Dial(srv)
	partial.Write([]byte("HASH unfinish"), `"HASH unfinish" (no newline)`)

	// Job 2 runs (held), jobs 3–6 fill the queue, line 7 waits in Put.
	busy := k.Dial(srv)
	var req strings.Builder
	for id := 2; id <= 7; id++ {
		fmt.Fprintf(&req, "HASH job%d\n", id)
	}
	busy.Write([]byte(req.String()), "6 HASH lines: job 2 held in OnJobStart, jobs 3–6 queued, line 7 waiting in Put")
	lines.wait(k, "before Close")

	closed := make(chan error, 1)
	go func() { closed <- raw.Close() }()
	k.OnAbort(func() { <-closed })

	// Step 4 (close the queue) fails the Put waiting for room.
	busy.ExpectLine(fail("", msgShuttingDown).answer(7))
	select {
	case err := <-closed:
		k.Fatalf("Close returned (%v) while job 2 was still running and jobs 3–6 were queued: "+
			"it must let the workers finish them", err)
	default:
	}
	// Step 2 (stop accepting) comes before step 4.
	if nc, err := net.DialTimeout("tcp", srv.Addr, testkit.IOTimeout); err == nil {
		nc.Close()
		k.Fatalf("a new connection was accepted after the queue was closed: Close must close the listener first")
	}

	// Step 5: the running and queued jobs finish and are answered.
	h.releaseAll()
	var got []string
	for range 5 {
		got = append(got, busy.ReadLine())
	}
	slices.Sort(got)
	var want []string
	for id := uint64(2); id <= 6; id++ {
		text := fmt.Sprintf("job%d", id)
		want = append(want, ok("", jobs.HashResult(jobs.Hash(text))).answer(id))
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		k.Fatalf("after Close began, the held job and the queued ones must still be answered\n  want: %q\n   got: %q", want, got)
	}
	select {
	case err := <-closed:
		if err != nil {
			k.Fatalf("Close returned %v, want nil", err)
		}
	case <-time.After(testkit.IOTimeout):
		k.Fatalf("every job was answered, but Close did not return within %v: "+
			"it must wait for the readers, the writers and the workers, and nothing else", testkit.IOTimeout)
	}
	// Close has returned: every connection must be closed already. (Each
	// writer logs at Debug as it closes its connection, and the check's
	// logger makes that slow: a Close that does not wait for the writers
	// returns before they close.)
	for _, c := range []struct {
		name string
		conn *testkit.Conn
	}{{"the busy client", busy}, {"the idle client", idle}, {"the client with half a line", partial}} {
		// The close is on its way already if Close waited: look, without waiting
		// long (a server goroutine Close did not wait for sleeps in its log for
		// twice as long).
		c.conn.NetConn().SetReadDeadline(time.Now().Add(testkit.QuietWindow))
		if _, err := c.conn.NetConn().Read(make([]byte, 1)); !testkit.IsClosed(err) {
			k.Fatalf("Close returned while %s's connection was still open (a read right after it: %v): Close "+
				"must wait for every connection's writer to finish and close it", c.name, err)
		}
	}
	k.CheckServeAfterClose(raw) // a second Close, then Serve
	srv.Close()
}

// slowDebugLogger is testkit.Logger whose Debug lines each take 400 ms: a
// server goroutine that logs as it ends is slow to end, so a Close that does
// not wait for it is caught.
func slowDebugLogger() *slog.Logger {
	return slog.New(slowDebug{testkit.Logger().Handler()})
}

type slowDebug struct{ slog.Handler }

func (h slowDebug) Enabled(context.Context, slog.Level) bool { return true }

func (h slowDebug) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelDebug {
		time.Sleep(2 * testkit.QuietWindow) // fault injection: a slow log sink, not synchronisation
	}
	if !h.Handler.Enabled(ctx, r.Level) {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}
