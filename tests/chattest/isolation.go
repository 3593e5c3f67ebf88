package chattest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/wire"
)

// Isolation checks exercise 2.5: clients cannot hurt each other. A client that
// stops reading delays nobody and is disconnected once its pending output
// passes Config.MaxPending; clients that vanish in the middle of a broadcast
// leave the others untouched; frames from concurrent broadcasters reach every
// connection whole.
func Isolation(t *testing.T, impl Impl) {
	k := testkit.New(t, "2.5")
	checkStalledReader(k, impl)
	checkBurst(k, impl)
	if impl.SlowsSender {
		checkBehindReaders(k, impl)
		checkOutboxBound(k, impl)
	}
	checkVanishingClients(k, impl)
	checkNoInterleaving(k, impl)
	checkKnobs(k, impl)
	checkBroadcastLockFree(k, impl)
	checkPrivateLockFree(k, impl)
	checkRepliesLockFree(k, impl)
	checkDroppedOnce(k, impl) // droponce.go
}

// checkBurst: one client sends a burst of 64 broadcasts of 64 KiB (4 MiB) as
// fast as it can, to 20 clients that all read. Each of them has far more
// coming than a pending-output limit of 1 MiB holds, yet none of them is
// slow: every one must receive the whole burst, and stay connected. A server
// that drops a receiver whose queue fills (the original's readers were
// dropped 0 to 14 at a time) lets one user kick the others off; it must slow
// the sender down instead, or queue more.
func checkBurst(k *testkit.T, impl Impl) {
	k.Helper()
	const readers, n = 20, 64
	names := []string{"burster"}
	for i := range readers {
		names = append(names, fmt.Sprintf("reader%02d", i))
	}
	e := start(k, impl, Config{MaxPending: 1 << 20}, names...)
	sender := e.loginAs("burster")
	frames := numbered("burster", n, wire.MaxPayload)
	done := make(fanIn, readers+1)
	conns := map[string]*testkit.Conn{}
	for _, name := range names[1:] {
		conns[name] = e.loginAs(name)
		receiveAll(conns[name], name, frames, nil, done)
	}
	sendAll(sender, "burster", frames, done)
	done.wait(k, readers+1, fmt.Sprintf("burster sent %d broadcasts of 64 KiB back to back (MaxPending = 1 MiB) to %d "+
		"clients that all read; every one must receive all of them. A reader that is merely behind a burst is not "+
		"a slow consumer: slow the sender down (its reader waits for room in the receivers' queues) rather than "+
		"drop the readers", n, readers))
	// And they are still connected: a broadcast after the burst reaches them.
	after := broadcastFrame("burster", everyone, []byte("after the burst"))
	sender.SendFrame(after)
	for _, name := range names[1:] {
		expect(k, conns[name], name, after, "after the burst, burster broadcast once more (every reader is still connected)")
	}
}

// checkOutboxBound: MaxPending bounds the outbox exactly. With MaxPending
// one frame of the largest size, a receiver that reads nothing, and small
// socket buffers between it and the server, the server can hold at most
// three such frames for it: one in the kernel's buffers and the writer's
// batch (the buffers hold far less than a frame), one in the outbox, and one
// in the push that waits. So of four broadcasts of 64 KiB, the fourth must
// wait, and with it the sender's QUERY_USER behind it, until the receiver
// reads. An outbox that lets its size run past the limit answers at once.
func checkOutboxBound(k *testkit.T, impl Impl) {
	k.Helper()
	const frame = wire.HeaderSize + wire.MaxPayload
	e := startOn(k, impl, Config{MaxPending: frame, StallTimeout: time.Minute}, k.ListenSmall(), "rex", "sam")
	rex := k.DialSmall(e.srv.Addr)
	rex.SetDeadline(time.Now().Add(testkit.IOTimeout))
	if _, err := rex.Write(testkit.Encode(loginFrame("rex", password("rex")))); err != nil {
		k.Fatalf("logging in as rex: %s", testkit.Describe(err))
	}
	if got, err := wire.ReadFrame(rex); err != nil || testkit.FrameDiff(loginReply("rex", replyOK), got) != "" {
		k.Fatalf("logging in as rex\n  want: %v\n   got: %v (%s)", loginReply("rex", replyOK), got, testkit.Describe(err))
	}
	sam := e.loginAs("sam")
	frames := numbered("sam", 4, wire.MaxPayload)
	query := wire.Frame{Type: wire.QueryUser, Sender: "sam"}
	done := make(fanIn, 1)
	sendAll(sam, "sam", append(frames, query), done)

	// rex reads nothing: sam's QUERY_USER waits behind the fourth broadcast.
	quiet := max(testkit.QuietWindow, testkit.IOTimeout/10)
	sam.NetConn().SetReadDeadline(time.Now().Add(quiet))
	if got, err := wire.ReadFrame(sam.NetConn()); err == nil {
		k.Fatalf("MaxPending = %d (one frame of the largest size); rex logged in over small socket buffers and "+
			"read nothing; sam sent 4 BROADCASTs of 64 KiB, then a QUERY_USER\n  want: no answer to sam while "+
			"rex reads nothing (rex's outbox, its writer's batch and the kernel's buffers hold at most 3 such "+
			"frames: the 4th waits for room, and sam's QUERY_USER behind it)\n   got: %v\nhint: a frame goes "+
			"into the outbox only if the outbox is empty or size + len(b) <= limit: the outbox then never holds "+
			"more than MaxPending", frame, brief(got))
	} else if !errors.Is(err, os.ErrDeadlineExceeded) {
		k.Fatalf("sam sent 4 BROADCASTs and a QUERY_USER while rex read nothing; reading sam's connection: %s",
			testkit.Describe(err))
	}

	// rex reads at last: the broadcasts reach him, and sam is answered.
	for i, want := range frames {
		rex.SetReadDeadline(time.Now().Add(testkit.IOTimeout))
		got, err := wire.ReadFrame(rex)
		if err != nil || testkit.FrameDiff(want, got) != "" {
			k.Fatalf("rex, reading at last: broadcast %d of %d\n  want: %v\n   got: %v (%s)", i+1, len(frames),
				brief(want), brief(got), testkit.Describe(err))
		}
	}
	got, err := sam.TryReadFrame()
	if err != nil || got.Type != wire.QueryUser {
		k.Fatalf("once rex had read the 4 broadcasts, sam's QUERY_USER\n  want: its answer\n   got: %v (%s)",
			brief(got), testkit.Describe(err))
	}
	done.wait(k, 1, "sam sending 4 broadcasts and a QUERY_USER")
}

// fanIn collects the results of the goroutines a check starts. Goroutines
// must not fail the check themselves (only the check's goroutine may call
// Fatalf), so they report an error or nil here.
type fanIn chan error

func (f fanIn) wait(k *testkit.T, n int, what string) {
	k.Helper()
	var errs []string
	for range n {
		if err := <-f; err != nil {
			errs = append(errs, "  "+err.Error())
		}
	}
	if len(errs) > 0 {
		k.Fatalf("%s:\n%s", what, strings.Join(errs, "\n"))
	}
}

// sendAll writes frames on c (logged in as name) from a goroutine.
func sendAll(c *testkit.Conn, name string, frames []wire.Frame, done fanIn) {
	go func() {
		for i, f := range frames {
			if err := c.TryWrite(testkit.Encode(f), "frame "+brief(f).String()); err != nil {
				done <- fmt.Errorf("%s could not send frame %d of %d: %s (the server stopped reading %s's frames)",
					name, i+1, len(frames), testkit.Describe(err), name)
				return
			}
		}
		done <- nil
	}()
}

// receiveAll reads len(want) frames on c (logged in as name) from a goroutine
// and compares them with want, in order. progress, if not nil, is closed after
// the first half.
func receiveAll(c *testkit.Conn, name string, want []wire.Frame, progress chan<- struct{}, done fanIn) {
	go func() {
		for i, w := range want {
			if i == len(want)/2 && progress != nil {
				close(progress)
			}
			got, err := c.TryReadFrame()
			if err != nil {
				done <- fmt.Errorf("%s received %d of %d frames, then %s", name, i, len(want), testkit.Describe(err))
				return
			}
			if diff := testkit.FrameDiff(w, got); diff != "" {
				done <- fmt.Errorf("%s's frame %d of %d is wrong (%s)\n    want: %v\n     got: %v", name, i+1, len(want), diff, brief(w), brief(got))
				return
			}
		}
		done <- nil
	}()
}

// numbered returns n broadcasts from name, each with a payload of size bytes
// that starts with its number. (The sender writes its own name, so the frames
// it sends and the frames the others receive are the same.)
func numbered(name string, n, size int) []wire.Frame {
	var frames []wire.Frame
	for i := range n {
		p := bytes.Repeat([]byte{byte('a' + i%26)}, size)
		copy(p, fmt.Sprintf("%s #%d ", name, i))
		frames = append(frames, broadcastFrame(name, everyone, p))
	}
	return frames
}

// checkStalledReader: clients log in and never read. Another broadcasts far
// more than a stalled client's socket buffers and MaxPending can hold; the
// clients that do read must get every frame meanwhile, and the stalled
// clients must end up disconnected.
//
// The sender sends in windows of a few frames and waits until both readers
// have them before it sends more: a reader that merely lags (the test runs
// under -race on a busy machine) must never come near MaxPending, or a
// correct server would rightly drop it.
//
// A server that drops a full client at once has several stallers to drop
// (stallers): a broadcast that stops at the first receiver it fails to write
// to misses the readers that come after it in the map's order, and with one
// staller the readers may come first; each staller overflows on a broadcast
// of its own and draws the order anew. (A server that slows the sender waits
// for each full queue in turn: one staller is enough there.)
func checkStalledReader(k *testkit.T, impl Impl) {
	k.Helper()
	const limit = 1 << 20
	stallers := []string{"staller"}
	if !impl.SlowsSender {
		stallers = []string{"staller0", "staller1", "staller2", "staller3", "staller4", "staller5"}
	}
	e := start(k, impl, Config{MaxPending: limit}, append([]string{"sender", "r1", "r2"}, stallers...)...)
	stalled := make(map[string]*testkit.Conn)
	for _, name := range stallers {
		stalled[name] = e.loginAs(name)
	}
	r1, r2, sender := e.loginAs("r1"), e.loginAs("r2"), e.loginAs("sender")

	// Twice what can be buffered for a staller: MaxPending, a batch the
	// server's writer may have taken, and the kernel's socket buffers.
	const window, size = 8, 32 << 10
	n := 2 * (2*limit + testkit.KernelBuffers()) / size
	frames := numbered("sender", n, size)
	why := fmt.Sprintf("%s logged in and never read; sender broadcast %d frames of %d KiB, %d at a time, "+
		"and r1 and r2 read each batch (MaxPending = %d bytes). A client that stops reading must not delay the "+
		"others: never wait for one client's socket while serving another (no write under a lock, none from the "+
		"sender's goroutine); queue the frame in the receiver's outbox, its pending output, instead; and a "+
		"frame that cannot be queued for one client (it is dropped) still goes to every other",
		strings.Join(stallers, ", "), n, size>>10, window, limit)
	for i := 0; i < n; i += window {
		batch := frames[i:min(i+window, n)]
		for _, f := range batch {
			send(k, sender, f)
		}
		for _, f := range batch {
			expect(k, r1, "r1", f, why)
			expect(k, r2, "r2", f, why)
		}
	}

	// Now read what reached each stalled client: the server must have given
	// up on it, so the stream ends.
	for _, name := range stallers {
		drained, err := io.Copy(io.Discard, stalled[name].Reader())
		if err != nil && !testkit.IsClosed(err) {
			k.Fatalf("%s never read while %d bytes were broadcast to it; afterwards it read %d bytes, then %s.\n"+
				"Want the server to disconnect a client whose pending output passes Config.MaxPending (%d bytes): "+
				"an unbounded outbox lets one stalled client eat the server's memory",
				name, n*size, drained, testkit.Describe(err), limit)
		}
		if all := int64(n * (size + wire.HeaderSize)); drained >= all {
			k.Fatalf("%s never read, yet it received all %d broadcasts (%d bytes) before the server closed its "+
				"connection: the server must give up on a client whose pending output passes Config.MaxPending (%d bytes)",
				name, n, all, limit)
		}
		k.Logf("%s had %d of %d bytes buffered for it when it was disconnected", name, drained, n*(size+wire.HeaderSize))
	}
}

// checkBehindReaders: a server that slows the sender down must never drop a
// reader that is merely behind. Four clients are sent a burst of twice what
// MaxPending and their socket buffers hold, and start reading only after a
// moment (300 ms: a phone on a slow network, a garbage-collection pause);
// then they read it all. The sender must be held back meanwhile, and every
// reader must receive the whole burst.
func checkBehindReaders(k *testkit.T, impl Impl) {
	k.Helper()
	const readers, limit = 4, 1 << 20
	names := []string{"burster"}
	for i := range readers {
		names = append(names, fmt.Sprintf("behind%d", i))
	}
	e := start(k, impl, Config{MaxPending: limit}, names...)
	sender := e.loginAs("burster")
	n := 2 * (limit + testkit.KernelBuffers()) / wire.MaxPayload
	frames := numbered("burster", n, wire.MaxPayload)
	done := make(fanIn, readers+1)
	wake := time.After(300 * time.Millisecond) // the readers' pause: traffic shaping, not synchronisation
	var conns []*testkit.Conn
	for _, name := range names[1:] {
		conns = append(conns, e.loginAs(name))
	}
	go func() {
		<-wake
		for i, c := range conns {
			receiveAll(c, names[i+1], frames, nil, done)
		}
	}()
	sendAll(sender, "burster", frames, done)
	done.wait(k, readers+1, fmt.Sprintf("burster sent %d broadcasts of 64 KiB (%d MiB, MaxPending = 1 MiB) to %d "+
		"clients that started reading 300 ms later; every one must receive all of them: a server that slows the "+
		"sender down waits for room in a full queue (up to its stall timeout) instead of dropping the receiver",
		n, n>>4, readers))
}

// checkVanishingClients: clients that reset their connections while a
// broadcast is under way affect no one else.
func checkVanishingClients(k *testkit.T, impl Impl) {
	k.Helper()
	readers := []string{"r1", "r2", "r3"}
	vanishers := []string{"v1", "v2", "v3", "v4"}
	// The limit is generous: nobody here is slow, some are gone.
	e := start(k, impl, Config{MaxPending: 16 << 20}, append(append([]string{"sender"}, readers...), vanishers...)...)
	var gone []*testkit.Conn
	for _, name := range vanishers {
		gone = append(gone, e.loginAs(name))
	}
	sender := e.loginAs("sender")

	const n, size = 200, 2 << 10
	frames := numbered("sender", n, size)
	done := make(fanIn, len(readers)+1)
	halfway := make(chan struct{})
	for i, name := range readers {
		var progress chan<- struct{}
		if i == 0 {
			progress = halfway
		}
		receiveAll(e.loginAs(name), name, frames, progress, done)
	}
	sendAll(sender, "sender", frames, done)
	select {
	case <-halfway:
	case <-time.After(testkit.IOTimeout):
	}
	for _, c := range gone {
		if tc, ok := c.NetConn().(*net.TCPConn); ok {
			tc.SetLinger(0) // close with a reset, as a crashed client's kernel does
		}
		c.Close()
	}
	done.wait(k, len(readers)+1, fmt.Sprintf("%v logged in, and reset their connections while sender's %d broadcasts were "+
		"under way; the others must receive every broadcast (a failed write to one client concerns that client only)", vanishers, n))

	late := e.loginAsNew("late")
	sender.SendFrame(broadcastFrame("sender", everyone, []byte("still there?")))
	expect(k, late, "late", broadcastFrame("sender", everyone, []byte("still there?")),
		"after four clients vanished mid-broadcast, late logged in and sender broadcast")
}

// checkNoInterleaving: several clients broadcast large frames at once; every
// client must read whole frames, each one exactly as sent, in each sender's
// order. Two writes per frame, or two writers on one connection without a
// lock, interleave their bytes here.
func checkNoInterleaving(k *testkit.T, impl Impl) {
	k.Helper()
	senders := []string{"b0", "b1", "b2", "b3"}
	readers := []string{"r0", "r1"}
	// The limit is generous: this check is about whole frames, not slow readers.
	e := start(k, impl, Config{MaxPending: 64 << 20}, append(append([]string{}, senders...), readers...)...)
	conns := map[string]*testkit.Conn{}
	for _, name := range append(append([]string{}, senders...), readers...) {
		conns[name] = e.loginAs(name)
	}

	const perSender = 30
	frames := map[string][]wire.Frame{}
	for i, name := range senders {
		for seq := range perSender {
			size := 1 + (seq*7919+i*104729)%wire.MaxPayload // 1 byte to 64 KiB, a different mix per sender
			p := bytes.Repeat([]byte{byte('A' + i), byte('a' + seq%26)}, size/2+1)[:size]
			copy(p, fmt.Sprintf("%s#%d#", name, seq))
			frames[name] = append(frames[name], broadcastFrame(name, everyone, p))
		}
	}

	done := make(fanIn, len(senders)+len(conns))
	for name, c := range conns {
		expected := map[string][]wire.Frame{}
		for _, s := range senders {
			if s != name {
				expected[s] = frames[s]
			}
		}
		receiveMerged(c, name, expected, done)
	}
	for _, name := range senders {
		sendAll(conns[name], name, frames[name], done)
	}
	done.wait(k, len(senders)+len(conns), fmt.Sprintf("%v each broadcast %d frames of up to 64 KiB at the same time; "+
		"every client reads them. Each frame must reach each client whole: one write per frame, and one writer per "+
		"connection at a time", senders, perSender))
}

// receiveMerged reads, from a goroutine, the frames of several senders that
// may arrive interleaved with each other (frame by frame), and checks that
// each sender's frames arrive whole, exactly once and in order.
func receiveMerged(c *testkit.Conn, name string, want map[string][]wire.Frame, done fanIn) {
	total := 0
	for _, list := range want {
		total += len(list)
	}
	go func() {
		next := map[string]int{}
		for i := range total {
			got, err := c.TryReadFrame()
			if err != nil {
				done <- fmt.Errorf("%s received %d of %d frames whole, then %s (bytes of two frames mixed up "+
					"make a header that does not decode)", name, i, total, describeReadErr(err))
				return
			}
			list := want[got.Sender]
			if next[got.Sender] >= len(list) {
				done <- fmt.Errorf("%s received an unexpected frame after %d good ones: %v", name, i, brief(got))
				return
			}
			w := list[next[got.Sender]]
			if diff := testkit.FrameDiff(w, got); diff != "" {
				done <- fmt.Errorf("%s's frame %d: %s\n    want: %v (the next frame from %s)\n     got: %v",
					name, i+1, diff, brief(w), got.Sender, brief(got))
				return
			}
			next[got.Sender]++
		}
		done <- nil
	}()
}

func describeReadErr(err error) string {
	if errors.Is(err, wire.ErrLength) || errors.Is(err, wire.ErrName) {
		return "a header that does not decode: " + err.Error()
	}
	return testkit.Describe(err)
}
