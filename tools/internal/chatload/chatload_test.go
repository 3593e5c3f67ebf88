package chatload_test

import (
	"bufio"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"serverlab/tools/given/users"
	"serverlab/tools/internal/chatload"
	"serverlab/tools/internal/chatload/chatloadtest"
)

// runRoom logs n clients in to addr and runs plan once.
func runRoom(t *testing.T, cfg chatload.Config, n int, plan chatload.Plan) chatload.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	room := chatload.Join(ctx, cfg, chatload.Names("t", n))
	defer room.Close()
	if room.Connected() != n {
		t.Fatalf("%d of %d clients logged in: %v", room.Connected(), n, room.LoginError())
	}
	res, err := room.Run(ctx, plan)
	if err != nil {
		t.Fatalf("Run(%+v): %v", plan, err)
	}
	return res
}

// Every client sends, and every other client receives each message once:
// the plan of loadgen's chat mode and of bench's chat experiment.
func TestEveryClientSends(t *testing.T) {
	for _, engine := range chatload.Engines() {
		t.Run(engine, func(t *testing.T) {
			addr := chatloadtest.StartRelay(t, 7) // frames split across reads
			cfg := chatload.Config{Addr: addr, Timeout: 5 * time.Second, Engine: engine, Logins: 2}
			res := runRoom(t, cfg, 4, chatload.Plan{Messages: 3, Interval: time.Millisecond, Size: 100})
			// 4 clients × 3 messages, each to the 3 others.
			want := tally{Clients: 4, Connected: 4, Sent: 12, Expected: 36}
			if got := counts(res); got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
			if res.Delivery.Successes != 36 || res.Delivery.Failures != 0 || res.Fanout.Successes != 12 {
				t.Errorf("delivery %d ok / %d failed, fan-out %d ok; want 36 / 0 and 12",
					res.Delivery.Successes, res.Delivery.Failures, res.Fanout.Successes)
			}
		})
	}
}

// With Senders and Turns, as in bench's c10k experiment, only the first
// clients send, and a sender does not hear itself.
func TestSomeClientsSendInTurn(t *testing.T) {
	for _, engine := range chatload.Engines() {
		t.Run(engine, func(t *testing.T) {
			addr := chatloadtest.StartRelay(t, 1000)
			cfg := chatload.Config{Addr: addr, Timeout: 5 * time.Second, Engine: engine}
			start := time.Now()
			res := runRoom(t, cfg, 5, chatload.Plan{Messages: 2, Interval: 40 * time.Millisecond, Senders: 2, Turns: true})
			// 2 senders × 2 messages, each to the 4 others.
			want := tally{Clients: 5, Connected: 5, Sent: 4, Expected: 16}
			if got := counts(res); got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
			// In turn: 0, 20, 40 and 60 ms.
			if took := time.Since(start); took < 60*time.Millisecond {
				t.Errorf("4 messages 20 ms apart took only %v", took)
			}
			if res.Fanout.Successes != 4 {
				t.Errorf("fan-out: %d messages reached every other client, want 4", res.Fanout.Successes)
			}
		})
	}
}

// What a relay never delivers is lost once Timeout has passed after the
// last send, and counted as failures.
func TestSilentRelayLosesEverything(t *testing.T) {
	for _, engine := range chatload.Engines() {
		t.Run(engine, func(t *testing.T) {
			addr := chatloadtest.StartRelay(t, 0)
			cfg := chatload.Config{Addr: addr, Timeout: 200 * time.Millisecond, Engine: engine}
			res := runRoom(t, cfg, 3, chatload.Plan{Messages: 2})
			want := tally{Clients: 3, Connected: 3, Sent: 6, Expected: 12, Lost: 12}
			if got := counts(res); got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
			if res.Delivery.Failures != 12 || res.Delivery.Errors["lost"] != 12 {
				t.Errorf("delivery failures %v, want 12 of kind lost", res.Delivery.Errors)
			}
		})
	}
}

// A client that cannot log in is left out, and Run still works with those
// that could (here none).
func TestLoginFailureLeavesTheClientOut(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nobody listens there now
	room := chatload.Join(context.Background(), chatload.Config{Addr: addr, Timeout: time.Second}, chatload.Names("t", 3))
	defer room.Close()
	if room.Connected() != 0 || room.LoginError() == nil {
		t.Fatalf("with no server: %d logged in, error %v; want 0 and an error", room.Connected(), room.LoginError())
	}
	res, err := room.Run(context.Background(), chatload.Plan{Messages: 1})
	if err != nil || res.Expected != 0 || res.Clients != 3 {
		t.Errorf("Run with nobody logged in: %+v, %v; want 3 clients, nothing expected, no error", counts(res), err)
	}
	if _, err := room.Run(context.Background(), chatload.Plan{Messages: 1}); err == nil {
		t.Error("a second Run did not fail")
	}
}

func TestAppendUsers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.txt")
	for _, prefix := range []string{"a", "b"} {
		if err := chatload.AppendUsers(path, chatload.Names(prefix, 2)); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	for s := bufio.NewScanner(f); s.Scan(); {
		u, err := users.ParseLine(s.Text())
		if err != nil || u.Password != chatload.Password {
			t.Fatalf("line %q: %+v, %v; want a user with password %q", s.Text(), u, err, chatload.Password)
		}
		names = append(names, u.Name)
	}
	if got := strings.Join(names, " "); got != "a0 a1 b0 b1" {
		t.Errorf("users %q, want a0 a1 b0 b1", got)
	}
}

func TestCheckEngine(t *testing.T) {
	if err := chatload.CheckEngine(chatload.Goroutines); err != nil {
		t.Errorf("goroutines: %v", err)
	}
	if err := chatload.CheckEngine("threads"); err == nil {
		t.Error("threads: no error")
	}
	if err := chatload.CheckEngine(chatload.Epoll); (err == nil) != chatload.EpollSupported {
		t.Errorf("epoll: %v, but EpollSupported is %v", err, chatload.EpollSupported)
	}
}

// tally is a Result's counts, to compare.
type tally struct {
	Clients, Connected   int
	Sent, Expected, Lost int64
}

func counts(r chatload.Result) tally {
	return tally{Clients: r.Clients, Connected: r.Connected, Sent: r.Sent, Expected: r.Expected, Lost: r.Lost}
}
