package chattest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"serverlab/tests/judge"
	"serverlab/tests/testkit"
	"serverlab/tools/given/wire"
)

// checkDroppedOnce: a client dropped by two senders at once is logged once
// (TODO(ex 2.5), drop: only the call that closed the outbox logs). rex logs
// in over small socket buffers and reads nothing; sam's fourth broadcast of
// 64 KiB and tom's first then both wait for room in rex's outbox (MaxPending
// one such frame), and the check sees both wait before the stall timeout
// ends either. The first to give up drops rex; the other, woken by the
// closed outbox, calls drop too. The warning must be logged once.
//
// Only for servers that slow the sender down with goroutines per client
// (chapter 02): an event loop drops a full receiver at once.
func checkDroppedOnce(k *testkit.T, impl Impl) {
	k.Helper()
	if !impl.GoroutinePerClient || !impl.SlowsSender {
		return
	}
	const frame = wire.HeaderSize + wire.MaxPayload
	stall := max(2*time.Second, testkit.IOTimeout/4) // outlasts the look that both pushes wait
	rec := newWarnRecorder()
	e := startOn(k, impl, Config{MaxPending: frame, StallTimeout: stall, Logger: slog.New(rec)}, k.ListenSmall(), "rex", "sam", "tom")
	rex := k.DialSmall(e.srv.Addr)
	rex.SetDeadline(time.Now().Add(testkit.IOTimeout))
	if _, err := rex.Write(testkit.Encode(loginFrame("rex", password("rex")))); err != nil {
		k.Fatalf("logging in as rex: %s", testkit.Describe(err))
	}
	if got, err := wire.ReadFrame(rex); err != nil || testkit.FrameDiff(loginReply("rex", replyOK), got) != "" {
		k.Fatalf("logging in as rex\n  want: %v\n   got: %v (%s)", loginReply("rex", replyOK), got, testkit.Describe(err))
	}
	sam, tom := e.loginAs("sam"), e.loginAs("tom")
	for _, c := range []*testkit.Conn{sam, tom} { // they read what the other sends
		nc := c.NetConn()
		nc.SetReadDeadline(time.Now().Add(testkit.WatchdogTimeout))
		go io.Copy(io.Discard, nc)
	}
	done := make(fanIn, 2)
	sendAll(sam, "sam", numbered("sam", 4, wire.MaxPayload), done)
	judge.Settle(testkit.IOTimeout) // sam's fourth broadcast waits for room in rex's outbox
	sendAll(tom, "tom", numbered("tom", 1, wire.MaxPayload), done)
	judge.Settle(testkit.IOTimeout) // and tom's
	deadline := time.Now().Add(stall + testkit.IOTimeout)
	for rec.count("rex") == 0 && time.Now().Before(deadline) {
		time.Sleep(testkit.QuietWindow) // a look at the log, not synchronisation: the log is the event
	}
	judge.Settle(testkit.IOTimeout) // the second drop, if any, is logged by now
	done.wait(k, 2, "sam sending 4 broadcasts and tom 1 while rex read nothing")
	msg, n := rec.most("rex")
	if n != 1 {
		got := fmt.Sprintf("%d warnings %q naming rex", n, msg)
		if n == 0 {
			got = "no warning naming rex"
		}
		k.Fatalf("sent: rex read nothing (MaxPending one 64 KiB frame, StallTimeout %v); sam's and tom's "+
			"broadcasts both waited for room in rex's outbox until one gave up and rex was dropped\n"+
			"expected: one warning naming rex (\"dropping client\", with the user and why)\n     got: %s\n"+
			"likely cause: drop logs on every call; log only when c.out.close() reports that this call "+
			"closed the outbox, so that a client dropped twice is logged once", stall, got)
	}
}

// warnRecorder is a log handler that keeps the messages of the records at
// Warn and above, by the values of their attributes (those of With too).
type warnRecorder struct {
	log   *warnLog
	attrs []slog.Attr
}

type warnLog struct {
	mu   sync.Mutex
	msgs map[string][]string // attribute value → messages
}

func newWarnRecorder() *warnRecorder {
	return &warnRecorder{log: &warnLog{msgs: map[string][]string{}}}
}

func (h *warnRecorder) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h *warnRecorder) Handle(_ context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		return nil
	}
	h.log.mu.Lock()
	defer h.log.mu.Unlock()
	add := func(a slog.Attr) bool {
		v := a.Value.String()
		h.log.msgs[v] = append(h.log.msgs[v], r.Message)
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	return nil
}

func (h *warnRecorder) WithAttrs(as []slog.Attr) slog.Handler {
	return &warnRecorder{log: h.log, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

func (h *warnRecorder) WithGroup(string) slog.Handler { return h }

// count is how many warnings named v.
func (h *warnRecorder) count(v string) int {
	h.log.mu.Lock()
	defer h.log.mu.Unlock()
	return len(h.log.msgs[v])
}

// most is the message logged most often among the warnings naming v, and
// how often.
func (h *warnRecorder) most(v string) (string, int) {
	h.log.mu.Lock()
	defer h.log.mu.Unlock()
	n := map[string]int{}
	best, max := "", 0
	for _, m := range h.log.msgs[v] {
		if n[m]++; n[m] > max {
			best, max = m, n[m]
		}
	}
	return best, max
}
