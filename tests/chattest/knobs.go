package chattest

import (
	"net"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/wire"
)

// defaultMaxPending and defaultStallTimeout are chapter 02's defaults
// (DefaultMaxPending, DefaultStallTimeout): a knob set to something else must
// not behave like them.
const (
	defaultMaxPending   = 1 << 20
	defaultStallTimeout = 2 * time.Second
)

// Knobs checks that Config.MaxPending and Config.StallTimeout are obeyed,
// not only read: every other check sets them to their defaults or leaves
// them 0, so a server that uses DefaultMaxPending or DefaultStallTimeout
// wherever it should use the Config passes those. Chapter 02 only
// (impl.SlowsSender): an event loop drops a full client at once.
func checkKnobs(k *testkit.T, impl Impl) {
	k.Helper()
	if !impl.SlowsSender {
		return
	}
	checkMaxPendingObeyed(k, impl)
	checkStallTimeoutObeyed(k, impl)
}

// loginSmall logs name in on a connection with small socket buffers (the
// kernel then holds only testkit.SmallAbsorption for a client that does not
// read, so what the server buffers shows in the bytes that reach it).
func (e *env) loginSmall(name string) net.Conn {
	e.k.Helper()
	nc := e.k.DialSmall(e.srv.Addr)
	nc.SetDeadline(time.Now().Add(testkit.IOTimeout))
	defer nc.SetDeadline(time.Time{})
	if _, err := nc.Write(testkit.Encode(loginFrame(name, password(name)))); err != nil {
		e.k.Fatalf("logging in as %s: %v%s", name, err, e.login)
	}
	got, err := wire.ReadFrame(nc)
	if want := loginReply(name, replyOK); err != nil || testkit.FrameDiff(want, got) != "" {
		e.k.Fatalf("logging in as %s: want %v, got %v (%v)%s", name, want, got, err, e.login)
	}
	return nc
}

// flood broadcasts n frames of size bytes from sender in a goroutine of its
// own (its writes block while the server slows it down), with a deadline of
// limit; the returned channel says, when it is done, how many frames went
// out whole and why it stopped.
func flood(nc net.Conn, n, size int, limit time.Duration) <-chan floodResult {
	done := make(chan floodResult, 1)
	frames := numbered("sender", n, size)
	go func() {
		nc.SetWriteDeadline(time.Now().Add(limit))
		for i, f := range frames {
			if _, err := nc.Write(testkit.Encode(f)); err != nil {
				done <- floodResult{i, err}
				return
			}
		}
		done <- floodResult{n, nil}
	}()
	return done
}

type floodResult struct {
	sent int
	err  error
}

// checkMaxPendingObeyed: with MaxPending 192 KiB, the sender to a client
// that never reads is held back once about that much waits for it, not
// DefaultMaxPending (1 MiB). StallTimeout is an hour, so nobody is dropped:
// what the sender gets into the server is counted in bytes, on sockets with
// small buffers, when its writes stop moving (a write deadline). It may be
// the staller's outbox (MaxPending), a batch its writer took (MaxPending
// more at most), a frame the sender's reader holds, and the kernel's buffers
// on both sides; a server that queues DefaultMaxPending takes far more.
func checkMaxPendingObeyed(k *testkit.T, impl Impl) {
	k.Helper()
	const limit, size = 192 << 10, 32 << 10
	e := startOn(k, impl, Config{MaxPending: limit, StallTimeout: time.Hour}, k.ListenSmall(), "sender", "staller")
	staller := e.loginSmall("staller")
	sender := e.loginSmall("sender")
	n := 4 * defaultMaxPending / size
	r := <-flood(sender, n, size, 2*time.Second)
	staller.Close() // lets the server's push for it, and the sender, go
	bound := 2*limit + 2*testkit.SmallAbsorption + 2*(size+wire.HeaderSize)
	if got := r.sent * (size + wire.HeaderSize); got > bound {
		k.Fatalf("Config.MaxPending = %d KiB (not the default %d KiB), StallTimeout 1 h; staller never read while "+
			"sender broadcast frames of %d KiB, on sockets with %d-byte buffers: want the sender held back after at "+
			"most %d KiB (the staller's outbox, a batch in its writer, the kernel's buffers), got %d frames (%d KiB) "+
			"taken. Likely cause: the outbox is made with DefaultMaxPending instead of the Config's MaxPending",
			limit>>10, defaultMaxPending>>10, size>>10, testkit.SmallBuffers, bound>>10, r.sent, got>>10)
	}
	k.Logf("MaxPending %d KiB: sender held back after %d frames of %d KiB (bound %d KiB)", limit>>10, r.sent, size>>10, bound>>10)
	if r.err == nil {
		k.Fatalf("staller never read (MaxPending %d KiB, StallTimeout 1 h); sender broadcast %d frames of %d KiB: "+
			"all were taken, want the sender held back until staller reads or is dropped", limit>>10, n, size>>10)
	}
}

// checkStallTimeoutObeyed: with StallTimeout set to an hour, a client that
// reads nothing for twice DefaultStallTimeout is still a client: the sender
// waits for it, and once it reads it receives every frame. A server that
// waits DefaultStallTimeout wherever it should wait Config.StallTimeout drops
// it after 2 s. (The check has to let that much time pass: it is what the
// knob is about.)
func checkStallTimeoutObeyed(k *testkit.T, impl Impl) {
	k.Helper()
	const limit, size = 128 << 10, 32 << 10
	e := startOn(k, impl, Config{MaxPending: limit, StallTimeout: time.Hour}, k.ListenSmall(), "sender", "slow")
	slow := e.loginSmall("slow")
	sender := e.loginAs("sender").NetConn()
	// More than the outbox, a writer's batch and the kernel hold: the
	// sender is held back until slow reads.
	n := (4*limit + testkit.SmallAbsorption) / size
	done := flood(sender, n, size, 4*testkit.IOTimeout+2*defaultStallTimeout)
	// The sender's writes may all fit its own socket's buffers; the
	// server's reader for it is held in a push for slow meanwhile. Let twice
	// the default stall pass: a server that used it has dropped slow.
	<-time.After(2 * defaultStallTimeout)
	frames := numbered("sender", n, size)
	slow.SetReadDeadline(time.Now().Add(testkit.IOTimeout))
	for i, want := range frames {
		got, err := wire.ReadFrame(slow)
		if err != nil {
			k.Fatalf("Config.StallTimeout = 1 h; slow read nothing for %v while sender broadcast %d frames of %d KiB, "+
				"then read: want all %d, got %d, then %s. Likely cause: the wait for room in a full outbox uses "+
				"DefaultStallTimeout (%v) instead of the Config's StallTimeout, so slow was dropped",
				2*defaultStallTimeout, n, size>>10, n, i, testkit.Describe(err), defaultStallTimeout)
		}
		if diff := testkit.FrameDiff(want, got); diff != "" {
			k.Fatalf("slow's frame %d of %d: %s", i+1, n, diff)
		}
		slow.SetReadDeadline(time.Now().Add(testkit.IOTimeout))
	}
	if r := <-done; r.err != nil {
		k.Fatalf("sender's broadcasts (to slow, who then read them all) failed after %d of %d frames: %s",
			r.sent, n, testkit.Describe(r.err))
	}
}
