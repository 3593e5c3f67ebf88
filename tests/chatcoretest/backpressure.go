package chatcoretest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"serverlab/tests/chatcoretest/hostile"
	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// BackPressure checks exercise 7.5: the bounded outbox and fairness. A
// client that stops reading is disconnected once Config.MaxPending bytes are
// queued for it, and nobody waits for it meanwhile (the original queued
// without bound); a client that floods the server with chat messages cannot
// push the others' messages back behind its flood.
func BackPressure(t *testing.T, impl Impl) {
	k := testkit.New(t, "7.5")
	const limit = proto.HeaderSize + proto.MaxFrame + 64<<10
	// A write that blocks for a minute fails too, and drops its client: a
	// server that never drops for the bound must not pass because of it.
	gate := &commitGate{}
	e := start(k, impl, Config{MaxPending: limit, WriteTimeout: time.Minute, OnCommit: gate.onCommit,
		MaxMessage: 256 << 10})

	check(k, e, "slow-consumer-dropped", func(k *testkit.T, e *env) {
		a, b := e.login("bp-sender"), e.login("bp-reader")
		slow := e.dialSmallWindow("bp-slow")
		slow.register("bp-slow")
		slow.authenticate("bp-slow")
		ch := a.createChannel("bp")
		a.join(ch.ID)
		b.join(ch.ID)
		slow.join(ch.ID)
		b.settle()

		// What may be in flight to bp-slow when the bound is reached: the
		// outbox, the server's socket send buffer (which the kernel grows up
		// to tcp_wmem's maximum), and a frame or two. Past that, the bound was
		// not what dropped it (a write timeout, perhaps, which takes seconds).
		inFlight := limit + kernelSendBuffer() + 1<<20
		// Up to 12 MiB: more than the limit plus what the kernel buffers.
		const n, size = 48, 256 << 10
		got := make(chan error, 1)
		sent := 0
		go func() { got <- b.readChats(ch.ID, a.user.ID, size) }()
		dropped := proto.UserLogoutEvent{UserID: slow.user.ID}
		for ; sent < n && !a.holds(dropped) && sent*size <= inFlight; sent++ {
			a.say(ch.ID, chatContent(sent, size))
		}
		a.say(ch.ID, endOfFlood)
		if err := <-got; err != nil {
			k.Fatalf("while bp-slow did not read, bp-reader should get every message in order: %v%s", err, b.context())
		}
		if a.holds(dropped) && sent*size > inFlight {
			k.Fatalf("bp-slow was disconnected only after %d messages of %d KiB (%d MiB): want it dropped once its "+
				"outbox would pass MaxPending (%d bytes), i.e. before %d MiB were sent (outbox plus kernel buffers); "+
				"bound the outbox in bytes, and drop the client when a push does not fit", sent, size>>10,
				sent*size>>20, limit, inFlight>>20)
		}
		if !a.holds(dropped) {
			k.Fatalf("bp-slow, which stopped reading, was not disconnected (no 125 for it) after %d messages of %d KiB "+
				"(MaxPending is %d bytes): bound the outbox in bytes and disconnect a client that would pass it "+
				"(the original queued without bound, so one client that stopped reading could exhaust the "+
				"server's memory)%s", sent, size>>10, limit, a.context())
		}
	})

	check(k, e, "flood-is-fair", func(k *testkit.T, e *env) {
		f, g, h := e.login("fl-flooder"), e.login("fl-other"), e.login("fl-watcher")
		ch := f.createChannel("fl")
		f.join(ch.ID)
		g.join(ch.ID)
		h.join(ch.ID)
		h.settle()
		const flood = 300
		var frames []byte
		for i := range flood {
			b, _ := proto.Encode(proto.WriteChat{Content: fmt.Sprintf("flood %d", i)})
			frames = append(frames, b...)
		}
		// After the flood, in the same write, a request that is answered at
		// once: it tells when the flooder's reader has read the whole flood.
		probe := f.id()
		b, _ := proto.Encode(proto.GetUserRequest{Name: "fl-other", RequestID: probe})
		frames = append(frames, b...)

		// The first commit is held at the gate while the flood arrives. A
		// server whose reader waits for its message's commit reads nothing
		// more meanwhile (so the probe's answer does not come, and the wait
		// below lasts its whole second); one whose reader goes on queues the
		// whole flood and answers the probe at once. Either way, once the
		// wait is over, a reader that does not wait has queued its flood
		// before fl-other's message, whatever the scheduling.
		release := gate.hold(k)
		f.write(frames, fmt.Sprintf("%d chat messages and a GetUser (request %d) in one write", flood, probe))
		gate.waitHeld(k, "fl-flooder's first chat message")
		f.awaitAnswer(probe, time.Second)
		release()
		seen, sent := 0, false
		for {
			m := h.next("the watcher reads the channel")
			rc, ok := m.(proto.ReceiveChat)
			switch {
			case !ok:
			case rc.UserID == f.user.ID:
				seen++
				if seen == 10 {
					g.send(proto.WriteChat{Content: "me too"})
					sent = true
				}
			case rc.UserID == g.user.ID && sent:
				if late := seen - 10; late > 60 {
					k.Fatalf("fl-other's message, sent when the flood was at message 10, came after %d more flood "+
						"messages: one client's flood must not push the others back (take one message of each "+
						"connection at a time: let a reader wait for its message's commit before it reads the next)", late)
				}
				h.waitFor("and the whole flood is delivered", proto.ReceiveChat{ChannelID: ch.ID, Content: fmt.Sprintf("flood %d", flood-1), UserID: f.user.ID})
				return
			}
		}
	})
	k.Run("pending-limit", func(t *testing.T) { checkPendingLimit(testkit.New(t, k.Exercise()), impl) })
	hostile.Output(k, hostileStart(impl))
}

// commitGate holds the committer in Config.OnCommit while a check needs no
// message to commit, so that the check knows what the server did meanwhile.
type commitGate struct {
	mu     sync.Mutex
	closed bool          // the next OnCommit waits
	held   chan struct{} // closed when the committer waits at the gate
	open   chan struct{} // closed to let it go
}

// onCommit is the server's Config.OnCommit.
func (g *commitGate) onCommit(int) {
	g.mu.Lock()
	if !g.closed {
		g.mu.Unlock()
		return
	}
	g.closed = false
	held, open := g.held, g.open
	g.mu.Unlock()
	close(held)
	<-open
}

// hold makes the next commit wait until the returned release is called. The
// check's cleanup releases it too, so that a failing check cannot leave the
// committer, and with it Close, waiting for ever.
func (g *commitGate) hold(k *testkit.T) (release func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	g.held, g.open = make(chan struct{}), make(chan struct{})
	release = sync.OnceFunc(func() {
		g.mu.Lock()
		g.closed = false
		g.mu.Unlock()
		close(g.open)
	})
	k.Cleanup(release)
	return release
}

// waitHeld waits until the committer waits at the gate.
func (g *commitGate) waitHeld(k *testkit.T, what string) {
	k.Helper()
	select {
	case <-g.held:
	case <-time.After(testkit.IOTimeout):
		k.Fatalf("%s was not committed within %v: Config.OnCommit was never called (the committer calls it after each "+
			"committed batch, and waits while it runs: exercise 7.4)", what, testkit.IOTimeout)
	}
}

// awaitAnswer waits until the answer to request id arrives or d has passed,
// whichever comes first. Nothing else is expected meanwhile; anything else
// that arrives is kept for later reads.
func (c *client) awaitAnswer(id uint64, d time.Duration) {
	c.k.Helper()
	deadline := time.Now().Add(d)
	for {
		c.nc.SetReadDeadline(deadline)
		m, err := proto.Read(c.r)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return
		}
		if err != nil {
			c.k.Fatalf("%s waits for the answer to request %d: %s%s", c.who, id, describe(err), c.context())
		}
		if r, ok := m.(proto.Requester); ok && r.Request() == id {
			return
		}
		c.backlog = append(c.backlog, m)
	}
}

// kernelSendBuffer is the most a socket's send buffer may hold here: the
// maximum of Linux's tcp_wmem, or 4 MiB (its default) where it cannot be read.
func kernelSendBuffer() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_wmem")
	if f := strings.Fields(string(b)); err == nil && len(f) == 3 {
		if n, err := strconv.Atoi(f[2]); err == nil {
			return n
		}
	}
	return 4 << 20
}

// chatContent is the i-th message of a flood: its number, padded to size.
func chatContent(i, size int) string {
	s := fmt.Sprintf("%06d:", i)
	return s + strings.Repeat("x", size-len(s))
}

// endOfFlood ends a flood of chatContent messages.
const endOfFlood = "end of flood"

// readChats reads the chat messages of user in ch, which must be those of
// chatContent in order, until endOfFlood. It runs on its own goroutine: it
// reports instead of failing.
func (c *client) readChats(ch, user uint32, size int) error {
	for i := 0; ; {
		c.nc.SetReadDeadline(time.Now().Add(testkit.IOTimeout))
		m, err := proto.Read(c.r)
		if err != nil {
			return fmt.Errorf("after %d messages: %s", i, describe(err))
		}
		rc, ok := m.(proto.ReceiveChat)
		if !ok || rc.UserID != user {
			continue
		}
		if rc.Content == endOfFlood {
			return nil
		}
		if want := chatContent(i, size); rc.ChannelID != ch || rc.Content != want {
			return fmt.Errorf("message %d: want %q…, got channel %d, %q…", i, want[:7], rc.ChannelID, rc.Content[:min(7, len(rc.Content))])
		}
		i++
	}
}
