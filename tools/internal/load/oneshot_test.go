//go:build linux

package load_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"serverlab/tools/internal/load"
)

// oneShotServer accepts connections until the test ends and runs serve on
// each, then closes it. It returns the address and a function that reports
// how many connections were accepted.
func oneShotServer(t *testing.T, serve func(net.Conn)) (string, func() int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var (
		mu       sync.Mutex
		accepted int
		wg       sync.WaitGroup
		conns    = map[net.Conn]bool{}
	)
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			accepted++
			conns[c] = true
			mu.Unlock()
			wg.Go(func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				serve(c)
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String(), func() int {
		mu.Lock()
		defer mu.Unlock()
		return accepted
	}
}

// reply reads one request line and answers with body, then closes.
func reply(body []byte) func(net.Conn) {
	return func(c net.Conn) {
		if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
			return
		}
		c.Write(body)
	}
}

// exactly is a Check that wants the reply to be want.
func exactly(want []byte) func(head []byte, total int) error {
	return func(head []byte, total int) error {
		if total != len(want) || !bytes.Equal(head, want[:len(head)]) {
			return load.WithKind("mismatch", errors.New("reply differs"))
		}
		return nil
	}
}

func TestOneShotCountsEveryRequest(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789"), 3000) // 30 000 bytes: several reads, past the head
	addr, accepted := oneShotServer(t, reply(body))
	res, err := load.OneShot{
		Addr: addr, Request: []byte("GET\n"), Clients: 3, Requests: 5, Loops: 2,
		HeadSize: 100, Check: exactly(body),
	}.Run(context.Background())
	require.NoError(t, err)
	require.Equal(t, int64(15), res.Successes, "3 clients × 5 requests: successes")
	require.Zero(t, res.Failures, "3 clients × 5 requests: failures (%v)", res.Errors)
	require.Equal(t, 15, accepted(), "3 clients × 5 requests: connections")
	require.Equal(t, int64(15), res.Latency.TotalCount(), "latencies recorded")
	require.Positive(t, res.P50, "latencies: p50")
	require.GreaterOrEqual(t, res.Max, res.P50, "latencies: max against p50")
}

func TestOneShotCheckFailuresByKind(t *testing.T) {
	addr, _ := oneShotServer(t, reply([]byte("wrong")))
	res, err := load.OneShot{
		Addr: addr, Request: []byte("GET\n"), Clients: 2, Requests: 3, Check: exactly([]byte("right")),
	}.Run(context.Background())
	require.NoError(t, err)
	require.Zero(t, res.Successes, "every reply wrong: successes")
	require.Equal(t, int64(6), res.Errors["mismatch"], "every reply wrong: failures of kind mismatch (all: %v)", res.Errors)
}

func TestOneShotRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	res, err := load.OneShot{
		Addr: addr, Request: []byte("GET\n"), Clients: 2, Requests: 2, Check: exactly(nil),
	}.Run(context.Background())
	require.NoError(t, err)
	require.Equal(t, int64(4), res.Errors[load.KindRefused], "no server: failures of kind %q (all: %v)", load.KindRefused, res.Errors)
}

func TestOneShotTimeout(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold) // before the server's cleanup waits for its goroutines
	addr, _ := oneShotServer(t, func(c net.Conn) { <-hold })
	start := time.Now()
	res, err := load.OneShot{
		Addr: addr, Request: []byte("GET\n"), Clients: 2, Requests: 1, Timeout: 50 * time.Millisecond,
		Check: exactly(nil),
	}.Run(context.Background())
	require.NoError(t, err)
	require.Equal(t, int64(2), res.Errors[load.KindTimeout], "a server that never answers: failures of kind %q (all: %v)",
		load.KindTimeout, res.Errors)
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("a 50 ms timeout took %v to fire", took)
	}
}

func TestOneShotCancel(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	accepted := make(chan struct{}, 4)
	addr, _ := oneShotServer(t, func(c net.Conn) {
		accepted <- struct{}{}
		<-hold
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-accepted
		cancel()
	}()
	res, err := load.OneShot{
		Addr: addr, Request: []byte("GET\n"), Clients: 2, Duration: time.Minute, Check: exactly(nil),
	}.Run(ctx)
	require.ErrorIs(t, err, context.Canceled, "cancelled run")
	require.Zero(t, res.Failures, "requests cut off by the cancellation are not the server's failures; got %v", res.Errors)
}

func TestOneShotDurationBound(t *testing.T) {
	addr, _ := oneShotServer(t, reply([]byte("ok")))
	res, err := load.OneShot{
		Addr: addr, Request: []byte("GET\n"), Clients: 2, Duration: 100 * time.Millisecond, Check: exactly([]byte("ok")),
	}.Run(context.Background())
	require.NoError(t, err)
	require.NotZero(t, res.Successes, "100 ms run: successes")
	require.Zero(t, res.Failures, "100 ms run: failures (%v)", res.Errors)
	require.GreaterOrEqual(t, res.Wall, 100*time.Millisecond, "100 ms run: wall")
}

func TestOneShotValidates(t *testing.T) {
	check := exactly(nil)
	for _, o := range []load.OneShot{
		{Addr: "127.0.0.1:1", Request: []byte("x"), Clients: 0, Requests: 1, Check: check},
		{Addr: "127.0.0.1:1", Request: []byte("x"), Clients: 1, Requests: 1},
		{Addr: "127.0.0.1:1", Clients: 1, Requests: 1, Check: check},
		{Addr: "127.0.0.1:1", Request: []byte("x"), Clients: 1, Check: check}, // no bound
	} {
		if _, err := o.Run(context.Background()); err == nil {
			t.Errorf("OneShot%+v: want an error, got none", o)
		}
	}
}
