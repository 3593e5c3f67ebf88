package chatcoretest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// checkPendingLimit: the outbox holds up to MaxPending bytes of frames, and
// the push that would pass it drops the connection. The limit is *passed*,
// not reached: frames that bring the outbox to exactly MaxPending are queued
// and delivered; one byte more, counting every frame whole (its 4-byte header
// too), and the client is dropped.
//
// The server and its clients use small socket buffers (testkit.ListenSmall,
// DialSmall), so what the kernel holds for a client that does not read is a
// few kilobytes. A first chat message of 256 KiB then keeps the client's
// writer busy (it has taken it from the outbox, and cannot finish writing it
// while the client does not read): from then on, the outbox holds exactly
// the frames pushed after it. Five chat messages whose frames add up to
// MaxPending−1, MaxPending and MaxPending+1 bytes follow, each case on a
// fresh connection.
func checkPendingLimit(k *testkit.T, impl Impl) {
	k.Helper()
	const limit = proto.HeaderSize + proto.MaxFrame + 64<<10
	e := startOn(k, impl, Config{MaxPending: limit, WriteTimeout: time.Minute, MaxMessage: 256 << 10},
		func(k *testkit.T) net.Listener { return k.ListenSmall() })
	a := e.login("px-sender")
	for i, pending := range []int{limit - 1, limit, limit + 1} {
		pendingCase(k, e, a, i, limit, pending)
	}
}

// pendingCase is one case of checkPendingLimit: pending bytes of frames
// queued for a new client behind the frame its writer is busy with.
func pendingCase(k *testkit.T, e *env, a *client, i, limit, pending int) {
	k.Helper()
	name := fmt.Sprintf("px-slow-%d", i)
	slow := e.dialSmall(name)
	slow.register(name)
	slow.authenticate(name)
	ch := a.createChannel(fmt.Sprintf("px-%d", i))
	a.join(ch.ID)
	slow.join(ch.ID)
	slow.settle()
	a.settle()

	// The frame that keeps the writer busy: the client reads its first bytes,
	// so the writer has taken it, and no more.
	stall := strings.Repeat("s", 256<<10)
	a.say(ch.ID, stall)
	stallFrame := receiveFrame(k, ch.ID, stall, a.user.ID)
	head := make([]byte, 64)
	slow.nc.SetReadDeadline(time.Now().Add(testkit.IOTimeout))
	if _, err := io.ReadFull(slow.r, head); err != nil || !bytes.Equal(head, stallFrame[:len(head)]) {
		k.Fatalf("%s should receive the first bytes of a 256 KiB chat message: got %q, %s", name, head, describe(err))
	}

	contents := fillContents(ch.ID, a.user.ID, pending)
	for _, c := range contents {
		a.say(ch.ID, c)
	}
	// Every push of the committer is done once a request of a's that takes
	// the server's lock after the last echo is answered.
	a.call(proto.GetChannelsRequest{RequestID: a.id()})

	sent := fmt.Sprintf("while %s's writer was busy with a 256 KiB chat message and %s did not read, %d chat "+
		"messages whose frames (4-byte header and JSON body) add up to %d bytes (MaxPending %d%+d)",
		name, name, len(contents), pending, limit, pending-limit)
	delivered := slow.readPending(stallFrame[len(head):], ch.ID, a.user.ID, contents)
	dropped := proto.UserLogoutEvent{UserID: slow.user.ID}
	if pending > limit {
		if delivered == len(contents) {
			k.Fatalf("%s\n  want: %s dropped, at the push that passed MaxPending (the 125 for it to the others)\n"+
				"   got: all %d delivered: the outbox held more than MaxPending; count every frame whole and "+
				"refuse the push when size + len(frame) > MaxPending", sent, name, delivered)
		}
		a.waitFor(fmt.Sprintf("%s; then %s, dropped, logs out", sent, name), dropped)
		return
	}
	if delivered < len(contents) {
		k.Fatalf("%s\n  want: all %d delivered (an outbox may hold exactly MaxPending bytes: the limit is passed, "+
			"not reached)\n   got: %d, then the connection was closed: refuse a push only when size + len(frame) "+
			"> MaxPending, with size the bytes still queued (not the frame the writer has taken)",
			sent, len(contents), delivered)
	}
	a.call(proto.GetChannelsRequest{RequestID: a.id()})
	if a.holds(dropped) {
		k.Fatalf("%s, then read them all\n  want: %s still logged in\n   got: a 125 for it: it was dropped", sent, name)
	}
	slow.nc.Close()
	a.waitFor("after "+name+" closed its connection", dropped)
}

// dialSmall opens a plain connection with small socket buffers
// (testkit.DialSmall).
func (e *env) dialSmall(who string) *client {
	e.k.Helper()
	nc := e.k.DialSmall(e.srv.Addr)
	e.k.Cleanup(func() { nc.Close() })
	return &client{k: e.k, e: e, who: who, nc: nc, r: bufio.NewReader(nc)}
}

// receiveFrame is the frame the server sends to each member for a chat
// message: its bytes, header included, which the suite counts.
func receiveFrame(k *testkit.T, ch uint32, content string, user uint32) []byte {
	k.Helper()
	b, err := proto.Encode(proto.ReceiveChat{ChannelID: ch, Content: content, UserID: user})
	if err != nil {
		k.Fatalf("test bug: encode a chat message: %v", err)
	}
	return b
}

// fillContents returns five chat messages from user in ch whose frames add
// up to exactly total bytes.
func fillContents(ch, user uint32, total int) []string {
	const n = 5
	empty, _ := proto.Encode(proto.ReceiveChat{ChannelID: ch, UserID: user})
	body := total - n*len(empty)
	var contents []string
	for i := range n {
		size := body / n
		if i == n-1 {
			size = body - (n-1)*(body/n)
		}
		prefix := fmt.Sprintf("%d:", i)
		contents = append(contents, prefix+strings.Repeat("f", size-len(prefix)))
	}
	return contents
}

// readPending reads, once the client reads again, the rest of the frame its
// writer was busy with, then the chat messages contents; it returns how many
// of those arrived whole before the connection ended.
func (c *client) readPending(rest []byte, ch, user uint32, contents []string) int {
	c.k.Helper()
	got := make([]byte, len(rest))
	c.nc.SetReadDeadline(time.Now().Add(testkit.IOTimeout))
	if _, err := io.ReadFull(c.r, got); err != nil {
		return 0
	}
	if !bytes.Equal(got, rest) {
		c.k.Fatalf("%s: the 256 KiB chat message arrived damaged", c.who)
	}
	for i, want := range contents {
		c.nc.SetReadDeadline(time.Now().Add(testkit.IOTimeout))
		m, err := proto.Read(c.r)
		if err != nil {
			return i
		}
		if !same(m, proto.ReceiveChat{ChannelID: ch, Content: want, UserID: user}) {
			c.k.Fatalf("%s: chat message %d of %d: want %d bytes of %q…, got %s", c.who, i+1, len(contents),
				len(want), want[:2], show(m))
		}
	}
	return len(contents)
}
