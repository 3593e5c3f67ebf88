package chattest

import (
	"bytes"
	"errors"
	"net"
	"os"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/wire"
)

// checkHeldPushMoves: what exercise 2.2's TODOs ask of a push that waits for
// room, checked in 2.2 itself. broadcast copies its receivers under s.mu and
// pushes outside it; take wakes every push waiting for room (it closes and
// renews o.taken). Both only show once a push waits, which needs 2.5's
// roomWaiter: until then a full outbox refuses at once. Without this check
// the mistakes cost 2.5 (checkBroadcastLockFree, checkStallTimeoutObeyed),
// and sent the student to the wrong code.
//
// So the check first finds out whether the server holds a sender back: slow
// (small socket buffers) never reads while sender broadcasts frames of
// 32 KiB; if sender's writes stop moving, a push waits for room in slow's
// outbox (StallTimeout is an hour). If the server took far more than
// MaxPending instead, it refuses a full outbox at once (2.5 not done yet),
// no push ever waits, and there is nothing more to see here. While the push
// waits, slow's name is asked for again (a broadcast that pushes under s.mu
// blocks every login); then slow reads while sender sends more, and must receive every whole frame sender sent
// (a take that does not close o.taken leaves the push waiting an hour).
//
// Chapter 02 only (impl.SlowsSender, impl.GoroutinePerClient): the outbox
// and its waiting pushes are that design's.
func checkHeldPushMoves(k *testkit.T, impl Impl) {
	k.Helper()
	if !impl.SlowsSender || !impl.GoroutinePerClient {
		return
	}
	const limit, size = 128 << 10, 32 << 10
	e := startOn(k, impl, Config{MaxPending: limit, StallTimeout: time.Hour}, k.ListenSmall(), "sender", "slow")
	slow := e.loginSmall("slow")
	k.Cleanup(func() { slow.Close() }) // lets a push still held fail, before the server's Close
	sender := e.loginSmall("sender")
	frames := numbered("sender", 4*(4*limit+testkit.SmallAbsorption)/size, size)

	written, held := holdSender(k, sender, len(frames), func(i int) []byte { return testkit.Encode(frames[i]) },
		"sender broadcast frames of 32 KiB to slow, who never reads")
	sent := written / (wire.HeaderSize + size)
	if !held {
		k.Logf("slow never read, and the server took %d broadcasts of %d KiB from sender without holding him "+
			"back: a full outbox refuses at once (exercise 2.5's wait not done); no push waits to check",
			sent, size>>10)
		return
	}
	what := "slow (small socket buffers) never read while sender broadcast frames of 32 KiB, until the server " +
		"stopped reading sender (MaxPending 128 KiB, StallTimeout 1 h: a push waits for room in slow's outbox)"

	// A second LOGIN as slow: join must take s.mu to find the name taken.
	// (A new client would be one more receiver that never reads.)
	c, got, err := e.tryLogin("slow", password("slow"))
	if err == nil {
		c.Close()
	}
	if want := loginReply("slow", replyFail); err != nil || testkit.FrameDiff(want, got) != "" {
		k.Fatalf("%s; then another connection sent a LOGIN as slow (online: the answer needs s.mu)\n  want: %v\n"+
			"   got: %v (%s)\nLikely cause: broadcast holds s.mu while it pushes, so a push waiting for one "+
			"client's room stops every login, broadcast and leave: copy the receivers under s.mu (others), "+
			"release it, then push to each", what, want, got, testkit.Describe(err))
	}

	// sender sends the rest (the frame cut short, then every other frame,
	// far more than the outbox holds) while slow reads: pushes keep finding
	// the outbox full, and each must be woken by the writer's take.
	var stream []byte
	for _, f := range frames {
		stream = append(stream, testkit.Encode(f)...)
	}
	rest := make(chan error, 1)
	go func() {
		sender.SetWriteDeadline(time.Now().Add(2 * testkit.IOTimeout))
		_, err := sender.Write(stream[written:])
		rest <- err
	}()
	for i := range frames {
		slow.SetReadDeadline(time.Now().Add(testkit.IOTimeout))
		f, err := wire.ReadFrame(slow)
		switch {
		case err == nil && later(frames[i+1:], f):
			k.Logf("slow's frame %d of %d is a later one of sender's broadcasts: a full outbox refused frames "+
				"(exercise 2.5's concern)", i+1, len(frames))
			return
		case err == nil && testkit.FrameDiff(frames[i], f) != "":
			k.Fatalf("%s; then slow read: frame %d of %d: %s\n  want: %v\n   got: %v",
				what, i+1, len(frames), testkit.FrameDiff(frames[i], f), brief(frames[i]), brief(f))
		case err != nil && !isTimeout(err):
			k.Logf("slow's read of frame %d of %d: %s: the server dropped slow (exercise 2.5's concern)",
				i+1, len(frames), testkit.Describe(err))
			return
		case err != nil:
			select {
			case <-rest:
				k.Logf("slow got %d of %d frames, then %s, and the server read all sender sent: it refused a "+
					"full outbox (exercise 2.5's concern)", i, len(frames), testkit.Describe(err))
				return
			default:
			}
			k.Fatalf("%s; then a LOGIN was answered, slow read, and sender sent %d frames more\n  want: all %d frames, "+
				"in order\n   got: %d, then %s, and the server does not read sender\nLikely cause: take does not "+
				"wake the pushes waiting for room (close o.taken and make a new one when the writer takes the "+
				"queue), so a push that found the outbox full waits the whole StallTimeout although slow reads",
				what, len(frames)-sent, len(frames), i, testkit.Describe(err))
		}
	}
	if err := <-rest; err != nil {
		k.Fatalf("%s; slow read all %d frames, yet sender's write of the last ones failed: %s",
			what, len(frames), testkit.Describe(err))
	}
}

// later reports whether f is one of frames.
func later(frames []wire.Frame, f wire.Frame) bool {
	for _, g := range frames {
		if testkit.FrameDiff(g, f) == "" {
			return true
		}
	}
	return false
}

// holdSender has conn send chunk(0), chunk(1), … up to n of them, one write
// each with a write deadline of a second, until a write stops moving (held:
// the server no longer reads conn) or all are sent. It returns the bytes that
// went out (the last chunk's in part) and whether conn was held. The server
// closing conn fails the check: what records this kind of wait holds, never
// closes.
func holdSender(k *testkit.T, conn net.Conn, n int, chunk func(i int) []byte, what string) (int, bool) {
	k.Helper()
	written := 0
	for i := range n {
		conn.SetWriteDeadline(time.Now().Add(time.Second))
		w, err := conn.Write(chunk(i))
		written += w
		if err != nil {
			if !isTimeout(err) {
				k.Fatalf("%s (StallTimeout 1 h): after %d bytes the server closed the connection (%s), want it "+
					"held back or served", what, written, testkit.Describe(err))
			}
			return written, true
		}
	}
	return written, false
}

// isTimeout reports whether err is a deadline that passed.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// checkPrivateHeldLockFree: exercise 2.3's "the lookup is under s.mu, the
// send outside it", checked in 2.3 (as checkHeldPushMoves does 2.2's): a
// private message that waits for room in slow's outbox must hold up no one
// else. Only a server whose push waits shows it (2.5's roomWaiter); one
// that refuses a full outbox at once has nothing to show here.
func checkPrivateHeldLockFree(k *testkit.T, impl Impl) {
	k.Helper()
	if !impl.SlowsSender || !impl.GoroutinePerClient {
		return
	}
	const limit, size = 128 << 10, 32 << 10
	e := startOn(k, impl, Config{MaxPending: limit, StallTimeout: time.Hour}, k.ListenSmall(), "sender", "slow", "dave")
	slow := e.loginSmall("slow")
	k.Cleanup(func() { slow.Close() }) // lets the held push fail, before the server's Close
	sender := e.loginSmall("sender")
	one := testkit.Encode(privateFrame("sender", "slow", bytes.Repeat([]byte("p"), size)))
	if _, held := holdSender(k, sender, 4*(4*limit+testkit.SmallAbsorption)/size, func(int) []byte { return one },
		"sender sent PRIVATE_MSGs of 32 KiB to slow, who never reads"); !held {
		k.Logf("the server took every PRIVATE_MSG to slow (who never reads) without holding sender back: a full " +
			"outbox refuses at once (exercise 2.5's wait not done); no push waits to check")
		return
	}
	loginWhileHeld(k, e, "sender sent slow PRIVATE_MSGs of 32 KiB until the server stopped reading him "+
		"(exercise 2.3: look the target up under s.mu, release it, then send)")
}

// checkQueryHeldLockFree: exercise 2.4's "the online set copied under s.mu",
// checked in 2.4: flooder sends QUERY_USERs and never reads, until his own
// replies fill his outbox and one waits for room (2.5's roomWaiter); dave
// must still log in. A reply queued with s.mu held stops him. A server that
// refuses a full outbox at once never holds flooder: nothing to check.
func checkQueryHeldLockFree(k *testkit.T, impl Impl) {
	k.Helper()
	if !impl.SlowsSender || !impl.GoroutinePerClient {
		return
	}
	e := startOn(k, impl, Config{MaxPending: 16 << 10, StallTimeout: time.Hour}, k.ListenSmall(), "flooder", "dave")
	flooder := e.loginSmall("flooder")
	k.Cleanup(func() { flooder.Close() }) // lets the held reply fail, before the server's Close
	one := testkit.Encode(wire.Frame{Type: wire.QueryUser, Sender: "flooder"})
	batch := bytes.Repeat(one, 64)
	// Replies of about 100 bytes: 16 KiB of outbox and the kernel's buffers
	// hold about 1,000; ten times that is far past any server that holds.
	written, held := holdSender(k, flooder, 10*(16<<10+testkit.SmallAbsorption)/100/64+1,
		func(int) []byte { return batch }, "flooder sent QUERY_USERs and never read")
	if !held {
		k.Logf("flooder sent %d QUERY_USERs and never read, and the server was not held back: a full outbox "+
			"refuses at once (exercise 2.5's wait not done); no reply waits to check", written/len(one))
		return
	}
	what := "flooder, who never reads, sent QUERY_USERs until the server stopped reading him (MaxPending 16 KiB, " +
		"StallTimeout 1 h: a reply to him waits for room in his own outbox)"
	dave, got, err := e.tryLogin("dave", password("dave"))
	if err == nil {
		dave.Close()
	}
	if want := loginReply("dave", replyOK); err != nil || testkit.FrameDiff(want, got) != "" {
		k.Fatalf("%s; then dave sent a LOGIN\n  want: %v\n   got: %v (%s)\nLikely cause: the QUERY_USER reply is "+
			"queued while s.mu is held, so while it waits for room nobody else can log in, send or leave: copy "+
			"the online set under s.mu, release it, then reply", what, want, got, testkit.Describe(err))
	}
	readReplies(k, flooder, written/len(one), wire.Frame{}, what)
}
