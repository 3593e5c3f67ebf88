package chattest

import (
	"bufio"
	"bytes"
	"net"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/wire"
)

// checkRepliesLockFree: the server's replies to a client's own requests
// (the QUERY_USER list, the "not online" answer to a PRIVATE_MSG) are queued
// like any frame, without s.mu: a client that floods requests and never
// reads fills its own outbox, and a reply that then waits for room while
// holding the mutex freezes every login, broadcast and private message for
// StallTimeout. The flooder is held by its own replies, so the mistake shows
// every time (exercise 2.5: a held sender needs 2.5's bounded outbox). Then
// he reads every reply, which frees his reader before the server closes.
func checkRepliesLockFree(k *testkit.T, impl Impl) {
	k.Helper()
	if !impl.GoroutinePerClient {
		return
	}
	for _, c := range []struct {
		what  string
		frame wire.Frame
		reply wire.Frame
	}{
		{"QUERY_USERs", wire.Frame{Type: wire.QueryUser, Sender: "flooder"}, wire.Frame{}},
		{"PRIVATE_MSGs to nobody-here, who is not online", privateFrame("flooder", "nobody-here", []byte("hi")),
			wire.Frame{Type: wire.PrivateMsg, Sender: wire.ServerName, Target: "flooder", Payload: []byte(notOnline)}},
	} {
		e := startOn(k, impl, Config{MaxPending: 16 << 10, StallTimeout: time.Hour}, k.ListenSmall(), "flooder", "dave")
		flooder, sent := holdOwnReplies(k, e, c.what, c.frame)
		what := "flooder, who never reads, sent " + c.what + " until the server stopped reading him"
		dave, got, err := e.tryLogin("dave", password("dave"))
		if err == nil {
			dave.Close()
		}
		if want := loginReply("dave", replyOK); err != nil || testkit.FrameDiff(want, got) != "" {
			k.Fatalf("%s (StallTimeout 1 h: the server waits for room in his own outbox, full of his replies); "+
				"then dave sent a LOGIN\n  want: %v\n   got: %v (%s)\n"+
				"Likely cause: a reply to a client's own request (QUERY_USER's list, PRIVATE_MSG's %q) is queued "+
				"while s.mu is held, so while it waits for room nobody else can log in, send or leave: copy what "+
				"the reply needs under s.mu, release it, then queue the reply",
				what, want, got, testkit.Describe(err), notOnline)
		}
		readReplies(k, flooder, sent, c.reply, what)
	}
}

// readReplies has flooder read the sent replies he is owed (a zero want:
// any frame of QUERY_USER), which frees his reader, and close.
func readReplies(k *testkit.T, flooder net.Conn, sent int, want wire.Frame, what string) {
	k.Helper()
	defer flooder.Close()
	flooder.SetReadDeadline(time.Now().Add(testkit.IOTimeout))
	r := bufio.NewReader(flooder)
	for i := range sent {
		got, err := wire.ReadFrame(r)
		bad := err != nil
		if !bad && want.Type == 0 {
			bad = got.Type != wire.QueryUser
		} else if !bad {
			bad = testkit.FrameDiff(want, got) != ""
		}
		if bad {
			k.Fatalf("%s; dave logged in, then flooder read his replies\n  want: %d replies\n   got: %d, then %v (%s)",
				what, sent, i, brief(got), testkit.Describe(err))
		}
	}
}

// holdOwnReplies logs in flooder (small socket buffers, never reads) and has
// him send frame, 64 to a write, until his writes stop moving: the server's
// reader for him is then waiting for room in his own outbox for a reply,
// which with StallTimeout an hour it will do until he reads. It returns his
// connection and how many whole frames he sent.
func holdOwnReplies(k *testkit.T, e *env, what string, frame wire.Frame) (net.Conn, int) {
	k.Helper()
	flooder := e.loginSmall("flooder")
	k.Cleanup(func() { flooder.Close() }) // lets the held reply fail, before the server's Close
	one := testkit.Encode(frame)
	batch := bytes.Repeat(one, 64)
	deadline := time.Now().Add(testkit.IOTimeout)
	written := 0
	for {
		flooder.SetWriteDeadline(time.Now().Add(time.Second))
		n, err := flooder.Write(batch)
		written += n
		if err != nil {
			if testkit.IsClosed(err) {
				k.Fatalf("flooder sent %s and never read (StallTimeout 1 h): after about %d frames the server "+
					"closed his connection (%s), want him held back", what, written/len(one), testkit.Describe(err))
			}
			flooder.SetWriteDeadline(time.Time{})
			return flooder, written / len(one) // held back: the server stopped reading flooder
		}
		if time.Now().After(deadline) {
			k.Fatalf("flooder sent %s and never read (StallTimeout 1 h, MaxPending 16 KiB): %d frames went "+
				"through in %v, want him held back once his outbox is full of replies", what, written/len(one), testkit.IOTimeout)
		}
	}
}
