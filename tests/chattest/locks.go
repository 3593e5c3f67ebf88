package chattest

import (
	"bytes"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/wire"
)

// Locks held across I/O. A goroutine-per-client server has one mutex for
// the set of clients; a goroutine that holds it while it waits for one
// client (room in its outbox, a write, the users file) stops every login,
// broadcast and private message behind it. These checks hold the slow party
// themselves, so that the mistake shows every time: a client that never
// reads, with StallTimeout an hour, keeps a push waiting for as long as the
// check likes; then another client's LOGIN must be answered at once.

// holdPush logs in slow (small socket buffers, never reads) and sender, and
// has sender send frame(i) for i = 0, 1, … until its writes stop moving:
// the server's reader for sender is then waiting for room in slow's outbox,
// which with StallTimeout an hour it will do until slow is closed.
func holdPush(k *testkit.T, e *env, what string, frame func(i int) wire.Frame) {
	k.Helper()
	slow := e.loginSmall("slow")
	k.Cleanup(func() { slow.Close() }) // lets the held push fail, before the server's Close
	sender := e.loginSmall("sender")
	deadline := time.Now().Add(testkit.IOTimeout)
	sender.SetWriteDeadline(time.Now().Add(time.Second))
	for i := 0; ; i++ {
		if _, err := sender.Write(testkit.Encode(frame(i))); err != nil {
			if testkit.IsClosed(err) {
				k.Fatalf("sender sent %s to slow, who never reads (StallTimeout 1 h): after %d frames the "+
					"server closed sender's connection (%s), want it held back", what, i, testkit.Describe(err))
			}
			return // held back: the server stopped reading sender
		}
		if time.Now().After(deadline) {
			k.Fatalf("sender sent %s to slow, who never reads (StallTimeout 1 h, MaxPending 128 KiB): %d frames "+
				"went through in %v, want sender held back once slow's outbox is full", what, i+1, testkit.IOTimeout)
		}
		sender.SetWriteDeadline(time.Now().Add(time.Second))
	}
}

// loginWhileHeld: dave logs in while a push for slow waits: he must be
// answered, within IOTimeout.
func loginWhileHeld(k *testkit.T, e *env, what string) {
	k.Helper()
	c, got, err := e.tryLogin("dave", password("dave"))
	if err == nil {
		defer c.Close()
	}
	if want := loginReply("dave", replyOK); err != nil || testkit.FrameDiff(want, got) != "" {
		k.Fatalf("%s; slow never reads and StallTimeout is 1 h, so the server waits for room in slow's outbox. "+
			"Then dave sent a LOGIN: want %v, got %v (%s). Likely cause: the server's mutex is held while a "+
			"frame waits for room in one client's outbox, so nobody else can log in, send or leave: take "+
			"the list of receivers under s.mu, release it, then send",
			what, want, got, testkit.Describe(err))
	}
}

// checkBroadcastLockFree: a broadcast waiting for slow's outbox holds up
// no one else (exercise 2.5).
func checkBroadcastLockFree(k *testkit.T, impl Impl) {
	k.Helper()
	if !impl.GoroutinePerClient {
		return
	}
	e := startOn(k, impl, Config{MaxPending: 128 << 10, StallTimeout: time.Hour}, k.ListenSmall(),
		"sender", "slow", "dave")
	payload := bytes.Repeat([]byte("b"), 32<<10)
	holdPush(k, e, "BROADCASTs of 32 KiB", func(int) wire.Frame { return broadcastFrame("sender", everyone, payload) })
	loginWhileHeld(k, e, "sender broadcast frames of 32 KiB until the server stopped reading him")
}

// checkPrivateLockFree: a private message waiting for slow's outbox holds
// up no one else. It is 2.5's, not 2.3's: a held sender needs 2.5's
// bounded outbox (the ladder: with 2.1–2.3 solved, nothing holds him).
func checkPrivateLockFree(k *testkit.T, impl Impl) {
	k.Helper()
	if !impl.GoroutinePerClient {
		return
	}
	e := startOn(k, impl, Config{MaxPending: 128 << 10, StallTimeout: time.Hour}, k.ListenSmall(),
		"sender", "slow", "dave")
	payload := bytes.Repeat([]byte("p"), 32<<10)
	holdPush(k, e, "PRIVATE_MSGs of 32 KiB", func(int) wire.Frame { return privateFrame("sender", "slow", payload) })
	loginWhileHeld(k, e, "sender sent slow PRIVATE_MSGs of 32 KiB until the server stopped reading him")
}
