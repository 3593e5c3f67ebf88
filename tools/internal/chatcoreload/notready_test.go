package chatcoreload

import (
	"bufio"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"serverlab/tools/given/chatcore/proto"
)

// fakeServer is just enough of chatcore for the load tester: it creates
// nobody (every 113 is an error, "exists"), logs anyone in but the names in
// silent, whose 109 it never answers (a login lost in a storm), joins, and
// echoes every 104 as a 103 from its sender.
func fakeServer(t *testing.T, silent ...string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	var next uint32
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, nc)
			next++
			uid := next
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := bufio.NewReader(nc)
				for {
					m, err := proto.Read(r)
					if err != nil {
						return
					}
					var answer proto.Message
					switch m := m.(type) {
					case proto.CreateUserRequest:
						answer = proto.ErrorResponse{RequestID: m.RequestID, Value: "exists"}
					case proto.AuthenticateRequest:
						if !strings.Contains(" "+strings.Join(silent, " ")+" ", " "+m.Name+" ") {
							answer = proto.AuthenticateResponse{RequestID: m.RequestID, User: proto.User{ID: uid, Name: m.Name}}
						}
					case proto.CreateChannelRequest:
						answer = proto.CreateChannelResponse{RequestID: m.RequestID, Channel: proto.Channel{ID: 1, Name: m.Name}}
					case proto.JoinChannelRequest:
						answer = proto.JoinChannelResponse{RequestID: m.RequestID}
					case proto.WriteChat:
						answer = proto.ReceiveChat{ChannelID: 1, Content: m.Content, UserID: uid}
					}
					if answer != nil {
						nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
						if proto.Write(nc, answer) != nil {
							return
						}
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// A tester whose login times out is counted not ready, and the others run:
// a ladder of steps goes on past the step where the server's login storm
// overflows.
func TestRunCountsATimedOutLoginNotReady(t *testing.T) {
	addr := fakeServer(t, "tester1")
	res, err := Run(t.Context(), Config{Addr: addr, Clients: 3, Interval: 50 * time.Millisecond,
		Duration: 300 * time.Millisecond, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatalf("Run with one of 3 logins unanswered: %v; want the other two to run", err)
	}
	if res.NotReady != 1 || res.NotReadyErr == nil || !strings.Contains(res.NotReadyErr.Error(), "tester1") ||
		!strings.Contains(res.NotReadyErr.Error(), "timed out") {
		t.Errorf("NotReady = %d (%v); want 1, tester1's login timed out", res.NotReady, res.NotReadyErr)
	}
	if res.Sent == 0 || res.Completed == 0 {
		t.Errorf("sent %d, completed %d: the two ready testers should have sent and seen their echoes", res.Sent, res.Completed)
	}
}

// When no tester can start there is nothing to measure: Run fails.
func TestRunFailsWhenNoTesterIsReady(t *testing.T) {
	addr := fakeServer(t, "tester0", "tester1")
	_, err := Run(t.Context(), Config{Addr: addr, Clients: 2, Interval: 50 * time.Millisecond,
		Duration: 200 * time.Millisecond, Timeout: 200 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Errorf("Run with every login unanswered: err = %v; want the testers' timeouts", err)
	}
}

// Strict is the original's tester: an error answer to a registration means
// "exists" and the run goes on (the fake server answers every one so), but
// the first login left unanswered ends the run with its error and no
// result, as the original quits there.
func TestStrictRunQuitsAtTheFirstError(t *testing.T) {
	// The timeout is long, so that on a busy machine only the silent
	// login can run into it: the others are answered at once.
	cfg := Config{Clients: 3, Interval: 50 * time.Millisecond, Duration: 300 * time.Millisecond,
		Timeout: 2 * time.Second, Strict: true}
	cfg.Addr = fakeServer(t)
	res, err := Run(t.Context(), cfg)
	// A message sent just before the run's end may still be on its way
	// when the results are counted (the original counts it failed too):
	// at most one per client.
	if err != nil || res.Sent == 0 || res.Failed() > int64(cfg.Clients) {
		t.Fatalf("strict run, every registration answered \"exists\": sent %d, failed %d, err %v; want it to run, as the original takes the error for \"exists\"",
			res.Sent, res.Failed(), err)
	}
	cfg.Addr = fakeServer(t, "tester1")
	res, err = Run(t.Context(), cfg)
	if err == nil || !strings.Contains(err.Error(), "tester1") || !strings.Contains(err.Error(), "timed out") {
		t.Errorf("strict run, tester1's login unanswered: err = %v; want the run to quit with tester1's timeout", err)
	}
	if res.Sent != 0 {
		t.Errorf("strict run, tester1's login unanswered: sent %d; want 0 (the original quits before its load test)", res.Sent)
	}
}
