package chatscaletest

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"serverlab/tests/chatcoretest/hostile"
	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// msgNotStored is the answer to a chat message the stream did not
// acknowledge (chapter 07's text).
const msgNotStored = "Message not stored."

// DurableEcho checks exercise 8.1: a chat message is published to the
// stream under a message id, and its echo comes only once the stream has
// acknowledged it — when the echo arrives, the stream holds the message,
// once. A write during a short NATS outage is retried with the same id and
// succeeds; one during a long outage is answered Message not stored. within
// the publish timeout, and the same server works again once NATS is back.
// A try stored whose acknowledgement is lost is retried with the same id:
// the message is stored once and delivered once (ackLost).
//
// Each part is a subtest with its own harness — its own watchdog, NATS and
// servers: together they take 21–30 s on a quiet machine, near one check's
// WatchdogTimeout, which a quiet grader does not stretch. A failed part ends
// the exercise, so that an unsolved server fails at once instead of waiting
// out the deadlines of the parts after it.
func DurableEcho(t *testing.T, impl Impl) {
	for _, c := range []struct {
		name  string
		check func(*testkit.T, Impl)
	}{
		{"echo-and-ids", echoAndIDs},
		{"same-text-twice", sameTextTwice},
		{"blip", blip},
		{"long-outage", longOutage},
		// The hostile checks come before ack-lost and full-stream, whose
		// servers start new followers late (after a stalled link, a
		// purge). That order no longer matters for the leak checks: each
		// part's servers are closed at its own end, before the next begins.
		{"connections", func(k *testkit.T, impl Impl) { hostile.Connections(k, hostileStart(impl)) }},
		{"ack-lost", ackLost},
		{"full-stream", fullStream},
		{"store-wiped", storeWiped}, // NATS restarted on an empty store (wiped.go)
		{"refused-at-once", refusedAtOnce},
		{"retries-paced", retriesPaced},
		{"ids-per-run", idsPerRun},                             // runids.go
		{"others-not-held-by-publish", othersNotHeldByPublish}, // publishwait.go
		{"chat-flood", func(k *testkit.T, impl Impl) { hostile.ChatFlood(k, hostileStartShared(impl)) }},
	} {
		if !t.Run(c.name, func(t *testing.T) { c.check(testkit.New(t, "8.1"), impl) }) {
			return // the exercise is lost; the later parts would only wait out their deadlines
		}
	}
}

// echoRig is what the first parts of 8.1 stand on: a NATS, the suite's
// observer of it, and two servers, A and B, with alice on A and bob on B,
// both in one channel.
type echoRig struct {
	n          *natsNode
	obs        *observer
	cfg        Config
	alice, bob *client
	ch         proto.Channel
}

func newEchoRig(k *testkit.T, impl Impl) *echoRig {
	k.Helper()
	r := &echoRig{n: startNATS(k)}
	r.obs = observe(k, r.n.url())
	r.cfg = baseConfig(k, r.n.url())
	a, b := serve(k, impl, "A", r.cfg), serve(k, impl, "B", r.cfg)
	r.alice, r.bob = a.dial("alice"), b.dial("bob")
	r.alice.newUser("alice")
	r.bob.newUser("bob")
	r.ch = r.alice.createChannel("durable")
	r.alice.join(r.ch.ID)
	r.bob.join(r.ch.ID)
	return r
}

// echoAndIDs checks that an echo means stored, once, under a fresh message
// id, and that the message reaches a member on another server.
func echoAndIDs(k *testkit.T, impl Impl) {
	r := newEchoRig(k, impl)
	alice, bob, obs, ch := r.alice, r.bob, r.obs, r.ch
	ids := map[string]bool{}
	for i := range 5 {
		content := fmt.Sprintf("durable %d", i)
		alice.send(proto.WriteChat{Content: content})
		want := proto.ReceiveChat{ChannelID: ch.ID, Content: content, UserID: alice.user.ID}
		alice.expectChats("the echo of one's own message", []proto.ReceiveChat{want})
		msgs := obs.messages(ch.ID)
		if len(msgs) != i+1 {
			k.Fatalf("after the echo of %q the stream's subject %s holds %d messages; want %d: an echo means stored, once%s",
				content, subject(ch.ID), len(msgs), i+1, alice.context())
		}
		last := msgs[len(msgs)-1]
		if last.body != (storedChat{User: alice.user.ID, Content: content}) {
			k.Fatalf("the stream's last message of %s is %+v; want %+v", subject(ch.ID), last.body, storedChat{User: alice.user.ID, Content: content})
		}
		if last.msgID == "" || ids[last.msgID] {
			k.Fatalf("message %d of %s has message id %q (Nats-Msg-Id); want a fresh id per message, so that a retry is stored once and two messages are never taken for one", last.seq, subject(ch.ID), last.msgID)
		}
		ids[last.msgID] = true
		bob.expectChats("a message written on another server", []proto.ReceiveChat{want})
	}
}

// sameTextTwice checks that the same text twice is two messages: a
// message's id comes from its request (the server and a counter), never
// from what it says.
func sameTextTwice(k *testkit.T, impl Impl) {
	r := newEchoRig(k, impl)
	same := proto.ReceiveChat{ChannelID: r.ch.ID, Content: "the same text", UserID: r.alice.user.ID}
	for range 2 {
		r.alice.send(proto.WriteChat{Content: same.Content})
		r.alice.expectChats("each of two messages of the same text is echoed", []proto.ReceiveChat{same})
	}
	expectStored(k, r.obs, r.ch.ID, same.Content, 2, "the same text sent twice is two messages: a message id made from the content makes the stream drop the second as a retry of the first")
}

// blip checks a write while NATS goes and comes back, within the publish
// timeout, as the write waits for its acknowledgement: it is retried with
// the same message id until NATS is back, echoed, and stored once.
func blip(k *testkit.T, impl Impl) {
	r := newEchoRig(k, impl)
	alice := r.alice
	r.n.stop()
	alice.send(proto.WriteChat{Content: "during a blip"})
	r.n.start()
	echo := proto.ReceiveChat{ChannelID: r.ch.ID, Content: "during a blip", UserID: alice.user.ID}
	got := alice.waitFor("a write during a short outage is retried until NATS is back", func(m proto.Message) bool {
		_, isErr := m.(proto.Error)
		return m == echo || isErr
	})
	if got != echo {
		k.Fatalf("alice: a write sent while NATS restarted (back within the publish timeout, %v)\nwant: the echo %+v\ngot:  %s\n(retry with the same message id until the timeout)%s%s",
			r.cfg.PublishTimeout, echo, show(got), notImplemented(got), alice.context())
	}
	expectStoredOnce(k, r.obs, r.ch.ID, "during a blip")
}

// longOutage checks a write during an outage longer than the publish
// timeout: it is answered Message not stored. about the timeout later, the
// retries pause meanwhile (no spinning), and once NATS is back the same
// server stores and delivers again, and what it stored before is still
// there once.
func longOutage(k *testkit.T, impl Impl) {
	r := newEchoRig(k, impl)
	alice, bob, n, cfg, ch := r.alice, r.bob, r.n, r.cfg, r.ch
	before := proto.ReceiveChat{ChannelID: ch.ID, Content: "before the outage", UserID: alice.user.ID}
	alice.send(proto.WriteChat{Content: before.Content})
	alice.expectChats("the echo of a message before the outage", []proto.ReceiveChat{before})

	n.stop()
	start := time.Now()
	cpu, _ := demand()
	alice.send(proto.WriteChat{Content: "while NATS is down"})
	down := proto.ReceiveChat{ChannelID: ch.ID, Content: "while NATS is down", UserID: alice.user.ID}
	got := alice.waitFor("a write while NATS is down", func(m proto.Message) bool {
		_, isErr := m.(proto.Error)
		return isErr || m == down
	})
	if got != (proto.Error{Value: msgNotStored}) {
		k.Fatalf("alice: a write while NATS is down\nwant: %s\ngot:  %s%s%s", show(proto.Error{Value: msgNotStored}), show(got), notImplemented(got), alice.context())
	}
	took := time.Since(start)
	if took > cfg.PublishTimeout+testkit.IOTimeout {
		k.Fatalf("the answer to a write while NATS is down took %v; want about the publish timeout, %v", took, cfg.PublishTimeout)
	}
	checkNoSpin(k, cpu, took, "two servers while NATS was down and a write was retried")
	n.start()
	after := proto.ReceiveChat{ChannelID: ch.ID, Content: "after the outage", UserID: alice.user.ID}
	alice.send(proto.WriteChat{Content: after.Content})
	got = alice.waitFor("the first write after NATS is back", func(m proto.Message) bool {
		_, isErr := m.(proto.Error)
		return m == after || isErr
	})
	if got != after {
		k.Fatalf("alice: a write once NATS is back (the same server, no restart)\nwant: the echo %+v\ngot:  %s%s", after, show(got), alice.context())
	}
	bob.waitFor("bob on the other server gets the message written after the outage", func(m proto.Message) bool { return m == after })
	expectStoredOnce(k, r.obs, ch.ID, before.Content)
	expectStoredOnce(k, r.obs, ch.ID, after.Content)
}

// stallNoticed is how long a server may take to notice that its link to
// NATS stalled (no error, no answer) and make a new one: pings every
// second or two, two unanswered, and a reconnect.
const stallNoticed = 10 * time.Second

// afterStall is ackLost's partition check: the link between server C and
// NATS stalls (the proxy forwards nothing more and keeps it open); C must
// notice within seconds, by its pings, and connect again (a new link goes
// through), so that a message written after the stall is stored and
// echoed. nats.go's default pings (every two minutes) leave it deaf.
func afterStall(k *testkit.T, proxy *ackDropper, carol *client, ch uint32, cfg Config) {
	k.Helper()
	proxy.stall()
	start := time.Now()
	deadline := start.Add(stallNoticed + cfg.PublishTimeout + testkit.IOTimeout)
	var answers []proto.Message
	for i := 0; ; i++ {
		want := proto.ReceiveChat{ChannelID: ch, Content: fmt.Sprintf("after a stall %d", i), UserID: carol.user.ID}
		carol.send(proto.WriteChat{Content: want.Content})
		got := carol.waitFor("the answer to a write after the link to NATS stalled", func(m proto.Message) bool {
			_, isErr := m.(proto.Error)
			rc, isChat := m.(proto.ReceiveChat)
			return isErr || isChat && strings.HasPrefix(rc.Content, "after a stall")
		})
		if got == want {
			return
		}
		answers = append(answers, got)
		if time.Now().After(deadline) {
			k.Fatalf("%s: the link between server C and NATS stalled (the suite's proxy forwards nothing more and keeps it open; a new link goes through)\n"+
				"want: the echo of a write within %v: the server pings NATS every second or two and, after two pings unanswered, connects again\n"+
				"got:  after %v, %d writes answered %s\n(set nats.go's PingInterval and MaxPingsOutstanding: by default a stalled link is noticed after minutes)%s",
				carol.who, stallNoticed, time.Since(start).Round(time.Second), len(answers), showAll(answers[max(0, len(answers)-2):]), carol.context())
		}
	}
}

// fullStream checks the stream's budget: with MaxStreamBytes small, writes
// fill it and the next is refused (Message not stored.), while logins,
// registrations and new channels still work (the buckets have budgets of
// their own); once room is made (the suite purges the channel, as an
// operator would) the same server stores messages again, no restart.
func fullStream(k *testkit.T, impl Impl) {
	k.Helper()
	n := startNATS(k)
	obs := observe(k, n.url())
	cfg := baseConfig(k, n.url())
	const budget = 32 << 10
	cfg.MaxStreamBytes = budget
	srv := serve(k, impl, "F", cfg)
	dave := srv.dial("dave")
	dave.newUser("dave")
	ch := dave.createChannel("filling")
	dave.join(ch.ID)

	text := strings.Repeat("x", 6000)
	refused, written := false, 0
	for i := 0; i < 2*budget/len(text) && !refused; i++ {
		want := proto.ReceiveChat{ChannelID: ch.ID, Content: fmt.Sprintf("%03d %s", i, text), UserID: dave.user.ID}
		dave.send(proto.WriteChat{Content: want.Content})
		got := dave.waitFor("the answer to a write into a stream that fills", func(m proto.Message) bool {
			_, isErr := m.(proto.Error)
			return isErr || m == want
		})
		switch {
		case got == want:
			written += len(want.Content)
		case got == proto.Error{Value: msgNotStored}:
			refused = true
		default:
			k.Fatalf("%s: a write of %d bytes into a stream of %d bytes (MaxStreamBytes) holding %d\nwant: the echo, or once it is full 101 %q\ngot:  %s%s%s",
				dave.who, len(want.Content), budget, written, msgNotStored, show(got), notImplemented(got), dave.context())
		}
	}
	if !refused {
		k.Fatalf("%s: wrote %d bytes into channel %d with the stream's budget (MaxStreamBytes) %d bytes, and every write was stored\n"+
			"want: 101 %q once the stream is full: the stream has MaxBytes and refuses new messages (Discard: new), so that history never pushes out the users and the channels"+
			"\ngot:  no refusal%s", dave.who, written, ch.ID, budget, msgNotStored, dave.context())
	}
	if msgs := obs.messages(ch.ID); len(msgs) == 0 || msgs[0].body.Content[:3] != "000" {
		k.Fatalf("the stream's first message of %s is not the channel's first once the stream is full: a full stream refuses the new, it does not drop the old (%d messages)", subject(ch.ID), len(msgs))
	}

	erin := srv.dial("erin")
	erin.register("erin")
	erin.login("erin")
	erin.createChannel("made-while-the-stream-is-full")
	dave2 := srv.dial("dave again")
	out := dave.id()
	dave.callExpect("logging out while the stream is full", proto.LogoutRequest{RequestID: out}, proto.LogoutResponse{RequestID: out})
	dave2.login("dave")
	dave2.join(ch.ID)

	obs.purge(ch.ID)
	after := proto.ReceiveChat{ChannelID: ch.ID, Content: "once room is made", UserID: dave2.user.ID}
	dave2.send(proto.WriteChat{Content: after.Content})
	got := dave2.waitFor("a write once room is made in the stream", func(m proto.Message) bool {
		_, isErr := m.(proto.Error)
		return isErr || m == after
	})
	if got != after {
		k.Fatalf("%s: a write once the suite purged the full channel (room made, the same server, no restart)\nwant: the echo %+v\ngot:  %s%s",
			dave2.who, after, show(got), dave2.context())
	}
}

// ackLost is DurableEcho's check of what the message id is for: a try
// whose acknowledgement is lost is retried with the same message id, so the
// message is stored once and delivered once. The server reaches NATS
// through the suite's proxy (ackDropper), which lets the stream store one
// publish and swallows the stream's answer. The sender's next message marks
// the end of what the first can bring: its server reads it only once the
// first one's publish has ended (one message in flight per connection).
func ackLost(k *testkit.T, impl Impl) {
	k.Helper()
	n := startNATS(k)
	obs := observe(k, n.url())
	proxy := startAckDropper(k, n.url())
	cfg := baseConfig(k, proxy.url())
	carol := serve(k, impl, "C", cfg).dial("carol")
	carol.newUser("carol")
	ch := carol.createChannel("lost-ack")
	carol.join(ch.ID)

	lost := proto.ReceiveChat{ChannelID: ch.ID, Content: "its acknowledgement lost", UserID: carol.user.ID}
	next := proto.ReceiveChat{ChannelID: ch.ID, Content: "the next message", UserID: carol.user.ID}
	proxy.arm()
	carol.send(proto.WriteChat{Content: lost.Content})
	dropped, tries, ok := proxy.waitDropped(testkit.IOTimeout)
	if !ok {
		k.Fatalf("%s: a chat message written on server C, which reaches NATS through the suite's proxy\n"+
			"want: a publish to the stream's %s with a reply subject, and the stream's acknowledgement, within %v\n"+
			"got:  no acknowledgement; the publishes to %s* the proxy saw: %s%s",
			carol.who, subject(ch.ID), testkit.IOTimeout, msgSubject, showTries(tries), carol.context())
	}
	carol.send(proto.WriteChat{Content: next.Content})
	got := carol.until("the echo of the message after one whose acknowledgement was lost", next, cfg.PublishTimeout+testkit.IOTimeout)

	var ids []string // of the copies in the stream
	for _, m := range obs.messages(ch.ID) {
		if m.body.Content == lost.Content {
			ids = append(ids, fmt.Sprintf("%q", m.msgID))
		}
	}
	var tried []pubTry
	for _, t := range proxy.seen() {
		if t.body.Content == lost.Content {
			tried = append(tried, t)
		}
	}
	echoes, others := 0, []proto.Message(nil)
	for _, m := range got {
		if m == lost {
			echoes++
		} else {
			others = append(others, m)
		}
	}
	if echoes != 1 || len(others) != 0 || len(ids) != 1 {
		heard := fmt.Sprintf("%d echoes", echoes)
		if echoes == 1 {
			heard = "1 echo"
		}
		if len(others) != 0 {
			heard += " and " + showAll(others)
		}
		k.Fatalf("%s: sent %s; the stream stored it, and the suite's proxy between server C and NATS dropped the acknowledgement (message id %q); then sent %s\n"+
			"want: one echo, then the next message's; and the stream's %s holding the message once: a try whose acknowledgement is lost is retried with the same message id, so the message is stored once and delivered once\n"+
			"got:  %s before the next message's echo; the stream holds the message %d times, message ids [%s]\n"+
			"the server's publishes of it: %s\n"+
			"(the stream drops a copy whose message id it has seen, and acknowledges it as the first)%s",
			carol.who, show(proto.WriteChat{Content: lost.Content}), dropped.msgID, show(proto.WriteChat{Content: next.Content}),
			subject(ch.ID), heard, len(ids), strings.Join(ids, " "), showTries(tried), carol.context())
	}
	afterStall(k, proxy, carol, ch.ID, cfg)
}

// showTries prints the publishes the proxy saw.
func showTries(ts []pubTry) string {
	if len(ts) == 0 {
		return "none"
	}
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("%s Nats-Msg-Id %q", t.subject, t.msgID)
		if t.reply == "" {
			parts[i] += " without a reply subject"
		}
	}
	s := fmt.Sprintf("%d: %s", len(ts), strings.Join(parts, ", "))
	if len(s) > 600 {
		s = s[:600] + "…"
	}
	return s
}

// expectStoredOnce fails unless the stream holds content in channel ch
// exactly once.
func expectStoredOnce(k *testkit.T, obs *observer, ch uint32, content string) {
	k.Helper()
	expectStored(k, obs, ch, content, 1, "acknowledged means stored, and a retry with the same message id is dropped by the stream")
}

// expectStored fails unless the stream holds content in channel ch want
// times.
func expectStored(k *testkit.T, obs *observer, ch uint32, content string, want int, why string) {
	k.Helper()
	n := 0
	for _, m := range obs.messages(ch) {
		if m.body.Content == content {
			n++
		}
	}
	if n != want {
		k.Fatalf("the stream holds %q %d times in %s; want %d: %s", content, n, subject(ch), want, why)
	}
}

// OneOrder checks exercise 8.2: every server delivers each message of the
// stream to its own members of the channel, once, in the stream's order —
// also after its consumer was reset (NATS restarted), when the stream
// delivers again what it had delivered before, and on a 3-node cluster
// with a server on each node.
func OneOrder(t *testing.T, impl Impl) {
	k := testkit.New(t, "8.2")
	n := startNATS(k)
	obs := observe(k, n.url())
	cfg := baseConfig(k, n.url())
	a, b := serve(k, impl, "A", cfg), serve(k, impl, "B", cfg)
	alice, bob, carol := a.dial("alice"), b.dial("bob"), a.dial("carol")
	alice.newUser("alice")
	bob.newUser("bob")
	carol.newUser("carol")
	x, y := alice.createChannel("order-x"), alice.createChannel("order-y")
	alice.join(x.ID)
	bob.join(x.ID)
	carol.join(y.ID)

	var inX, inY []proto.ReceiveChat
	for i := range 12 {
		user := []uint32{alice.user.ID, bob.user.ID}[i%2]
		content := fmt.Sprintf("x%d", i)
		obs.publish(x.ID, user, content)
		inX = append(inX, proto.ReceiveChat{ChannelID: x.ID, Content: content, UserID: user})
		if i%4 == 0 {
			content := fmt.Sprintf("y%d", i)
			obs.publish(y.ID, carol.user.ID, content)
			inY = append(inY, proto.ReceiveChat{ChannelID: y.ID, Content: content, UserID: carol.user.ID})
		}
	}
	alice.expectChats("messages published to the stream (as any server would)", inX)
	bob.expectChats("the same messages, on another server, in the same order", inX)
	carol.expectChats("the messages of her own channel only", inY)

	// Dave joins after those messages: a copy of one of them, delivered
	// again after the reset below, is not news to anyone, him included.
	dave := b.dial("dave")
	dave.newUser("dave")
	dave.join(x.ID)

	// NATS restarts: every server's consumer is reset, and the stream
	// delivers from the server's start again.
	n.restart()
	var more []proto.ReceiveChat
	for i := range 6 {
		content := fmt.Sprintf("after restart %d", i)
		obs.publish(x.ID, bob.user.ID, content)
		more = append(more, proto.ReceiveChat{ChannelID: x.ID, Content: content, UserID: bob.user.ID})
	}
	why := "after a consumer reset, only the new messages (a high-water mark drops what was delivered already)"
	alice.expectChats(why, more)
	bob.expectChats(why, more)
	dave.expectChats(why+"; dave joined after the first ones were delivered, and gets none of them", more)
	alice.expectNoChat("nothing more: every message is delivered once")
	bob.expectNoChat("nothing more: every message is delivered once")
	carol.expectNoChat("nothing of her channel was published after the restart, and nothing may come twice")

	oneOrderOnCluster(k, impl)
	wipedStream(k, impl)
}

// wipedStream checks a store wiped under a running server: the stream is
// deleted and made again (as by a server started on a wiped NATS), so its
// sequences start again from 1, below the server's high-water mark. A
// message written then is stored; its writer must get its echo (or an
// error) — never silence: the server notices that the stream is a new one
// and follows it from its start.
func wipedStream(k *testkit.T, impl Impl) {
	k.Helper()
	n := startNATS(k)
	obs := observe(k, n.url())
	cfg := baseConfig(k, n.url())
	a := serve(k, impl, "A", cfg)
	alice := a.dial("alice")
	alice.newUser("alice")
	ch := alice.createChannel("wiped")
	alice.join(ch.ID)
	for i := range 5 {
		obs.publish(ch.ID, alice.user.ID, fmt.Sprintf("before the wipe %d", i))
	}
	alice.nextChat("messages before the wipe")
	for range 4 {
		alice.nextChat("messages before the wipe")
	}

	obs.deleteStream(streamName)
	serve(k, impl, "B", cfg) // makes the stream again, from sequence 1
	after := proto.ReceiveChat{ChannelID: ch.ID, Content: "after the wipe", UserID: alice.user.ID}
	alice.send(proto.WriteChat{Content: after.Content})
	deadline := time.Now().Add(testkit.IOTimeout + cfg.PublishTimeout)
	for {
		m, err := alice.tryNext(time.Until(deadline))
		if err != nil {
			k.Fatalf("%s: a write after the stream %s was deleted and made again (as by a server started on a wiped NATS: its sequences start from 1 again, below the server's high-water mark)\n"+
				"want: the echo %+v (the message is stored): never silence\ngot:  nothing within %v (%v); the message is stored: the server's consumer waits past the old high-water mark\n"+
				"(notice that the stream is a new one — its creation time changed — and follow it from its start, the mark reset)%s",
				alice.who, streamName, after, testkit.IOTimeout+cfg.PublishTimeout, err, alice.context())
		}
		if _, isErr := m.(proto.Error); isErr || m == after {
			if m != after {
				k.Fatalf("%s: a write after the stream %s was deleted and made again\nwant: the echo %+v\ngot:  %s%s", alice.who, streamName, after, show(m), alice.context())
			}
			return
		}
	}
}

// oneOrderOnCluster is OneOrder's cluster check: three NATS nodes, a
// server on each (the stream kept by all three), a client on each server;
// every client gets every message once, in one order.
func oneOrderOnCluster(k *testkit.T, impl Impl) {
	k.Helper()
	nodes := startCluster(k)
	obs := observe(k, nodes[0].url())
	var clients []*client
	for i, n := range nodes {
		cfg := baseConfig(k, n.url())
		cfg.Replicas = 3
		c := serve(k, impl, fmt.Sprintf("C%d", i+1), cfg).dial(fmt.Sprintf("user %d", i+1))
		c.newUser(fmt.Sprintf("user-%d", i+1))
		clients = append(clients, c)
	}
	ch := clients[0].createChannel("cluster")
	for _, c := range clients {
		c.join(ch.ID)
	}
	var want []proto.ReceiveChat
	for i := range 20 {
		user := clients[i%3].user.ID
		content := fmt.Sprintf("cluster %d", i)
		obs.publish(ch.ID, user, content)
		want = append(want, proto.ReceiveChat{ChannelID: ch.ID, Content: content, UserID: user})
	}
	for _, c := range clients {
		c.expectChats("on a 3-node cluster, a server on each node: every message once, in the stream's order", want)
	}
}

// History checks exercise 8.3: GetChats reads the stream, so every server
// — one started after the messages were written, one restarted — answers
// the same newest N, oldest first, with the stream's sequence as the id;
// a history costs what it returns, and a cluster answers it too.
//
// Each part is a subtest with its own harness — its own watchdog, NATS and
// servers — as 8.1's and 8.5's are: together they took 23 s at load 3–6,
// near one check's WatchdogTimeout. A failed part ends the exercise.
func History(t *testing.T, impl Impl) {
	for _, c := range []struct {
		name  string
		check func(*testkit.T, Impl)
	}{
		{"reads", historyReads},
		{"cost", historyCost},
		{"across-channels", historyAcrossChannels},
		{"cluster", historyOnCluster},
		{"output", func(k *testkit.T, impl Impl) { hostile.Output(k, hostileStart(impl)) }},
		{"skips-undecodable", historySkipsUndecodable}, // historyreads.go
		{"makes-no-consumer", historyMakesNoConsumer},  // historyreads.go
		{"without-stream", historyWithoutStream},       // historyreads.go
		{"stale-replica", historyFromStaleReplica},     // replicastale.go
		{"count-fails", historyCountFails},             // historyfails.go
		{"read-fails", historyReadFails},               // historyfails.go
	} {
		if !t.Run(c.name, func(t *testing.T) { c.check(testkit.New(t, "8.3"), impl) }) {
			return // the exercise is lost; the later parts would only wait out their deadlines
		}
	}
}

// historyReads checks that every server — one started after the messages
// were written, one restarted — answers the same newest N, oldest first,
// with the stream's sequence as the id, and that a flood of GetChats leaves
// no consumers behind.
func historyReads(k *testkit.T, impl Impl) {
	n := startNATS(k)
	obs := observe(k, n.url())
	cfg := baseConfig(k, n.url())
	a := serve(k, impl, "A", cfg)
	alice := a.dial("alice")
	alice.newUser("alice")
	x, y := alice.createChannel("hist-x"), alice.createChannel("hist-y")
	var inX, inY []proto.ChatMessage
	for i := range 30 {
		content := fmt.Sprintf("history %d", i)
		seq := obs.publish(x.ID, alice.user.ID, content)
		inX = append(inX, proto.ChatMessage{Content: content, ID: uint32(seq), UserID: alice.user.ID})
		if i%10 == 0 {
			seq := obs.publish(y.ID, 4242, "y "+content)
			inY = append(inY, proto.ChatMessage{Content: "y " + content, ID: uint32(seq), UserID: 4242})
		}
	}
	b := serve(k, impl, "B", cfg) // started after the messages were stored
	bob := b.dial("bob")
	bob.newUser("bob")

	expect := func(c *client, ch, limit uint32, want []proto.ChatMessage, why string) {
		k.Helper()
		got := c.history(ch, limit)
		if !slices.Equal(got, want) {
			k.Fatalf("%s: GetChats(channel %d, limit %d): %s\nwant %d: %s\ngot  %d: %s%s",
				c.who, ch, limit, why, len(want), chats(want), len(got), chats(got), c.context())
		}
	}
	expect(alice, x.ID, 10, inX[20:], "the newest 10, oldest first, with the stream's sequence as the id")
	expect(bob, x.ID, 10, inX[20:], "every server answers the same")
	expect(bob, x.ID, 1000, inX, "a limit past the channel's size gives all of it")
	expect(bob, y.ID, 2, inY[1:], "another channel's messages are its own")
	expect(bob, 999999, 10, []proto.ChatMessage{}, "a channel without messages has an empty history")
	expect(alice, x.ID, 0, []proto.ChatMessage{}, "limit 0 asks for nothing")

	seq := obs.publish(x.ID, bob.user.ID, "the newest")
	inX = append(inX, proto.ChatMessage{Content: "the newest", ID: uint32(seq), UserID: bob.user.ID})
	expect(alice, x.ID, 3, inX[len(inX)-3:], "a message stored a moment ago is in the history")
	expect(bob, x.ID, 1, inX[len(inX)-1:], "limit 1 is the newest message alone")

	// A flood of GetChats leaves no consumers behind: NATS caps them (1,000
	// by default), and past the cap every history fails.
	before := obs.consumers()
	for range 40 {
		bob.history(x.ID, 5)
	}
	if got := obs.consumers(); got > before+2 {
		k.Fatalf("after 40 GetChats on server B the stream %s has %d consumers (%d before them); want no more than before (±2): "+
			"a history read leaves nothing in NATS — read by number (direct get), or delete the consumer it made",
			streamName, got, before)
	}

	a.restart()
	alice = a.dial("alice again")
	alice.login("alice")
	expect(alice, x.ID, 5, inX[len(inX)-5:], "a restarted server has the same history: it lives in the stream")
}

// longChannel is the length of historyCost's channel: long enough that a
// history read from the channel's start costs thousands of messages.
const longChannel = 5000

// historyCost checks that a history costs what it returns, not what the
// channel holds (a channel of a million messages must be readable within
// the request timeout): the server reaches NATS through the suite's proxy,
// which counts the chat messages NATS sends it while it answers one
// GetChats of 10 on a channel of longChannel. And with NATS down the
// answer is Storage failed., never an empty history.
func historyCost(k *testkit.T, impl Impl) {
	k.Helper()
	n := startNATS(k)
	obs := observe(k, n.url())
	writer := serve(k, impl, "W", baseConfig(k, n.url())) // makes the stream
	const ch = 77
	obs.publishMany(ch, 4242, longChannel, func(i int) string { return fmt.Sprintf("long %d", i) })
	want := []proto.ChatMessage{}
	for _, m := range obs.messages(ch)[longChannel-10:] {
		want = append(want, proto.ChatMessage{Content: m.body.Content, ID: uint32(m.seq), UserID: m.body.User})
	}
	proxy := startAckDropper(k, n.url())
	cfg := baseConfig(k, proxy.url())
	srv := serve(k, impl, "L", cfg)
	erin := srv.dial("erin")
	erin.newUser("erin")
	writer.srv.Close() // only L is counted from here on

	before := proxy.chatsSent()
	got := erin.history(ch, 10)
	sent := proxy.chatsSent() - before
	if !slices.Equal(got, want) {
		k.Fatalf("%s: GetChats(channel %d, limit 10) on a channel of %d messages\nwant: %s\ngot:  %s%s", erin.who, ch, longChannel, chats(want), chats(got), erin.context())
	}
	if limit := 4*10 + 64; sent > limit {
		k.Fatalf("%s: to answer GetChats(channel %d, limit 10) on a channel of %d messages, NATS sent server L %d of the channel's messages; want at most %d: "+
			"a history costs what it returns — find where the newest 10 start (the stream counts a subject's messages from any sequence on: a direct get's Nats-Num-Pending) and read from there, not from the channel's start%s",
			erin.who, ch, longChannel, sent, limit, erin.context())
	}

	n.stop()
	start := time.Now()
	id := erin.id()
	reply := erin.call(proto.GetChatsRequest{ChannelID: ch, Limit: 10, RequestID: id})
	if want := (proto.ErrorResponse{RequestID: id, Value: proto.MsgStorageFailed}); reply != want {
		k.Fatalf("%s: GetChats while NATS is down\nwant: %s\ngot:  %s\n(an error reading the stream is the client's to know: an empty history says the channel has none)%s",
			erin.who, show(want), showHistory(reply), erin.context())
	}
	if took := time.Since(start); took > cfg.RequestTimeout+testkit.IOTimeout {
		k.Fatalf("GetChats while NATS is down took %v to be answered; want about the request timeout, %v", took, cfg.RequestTimeout)
	}
}

// showHistory prints an answer to GetChats briefly.
func showHistory(m proto.Message) string {
	if r, ok := m.(proto.GetChatsResponse); ok {
		return fmt.Sprintf("106 with %d messages %s", len(r.Messages), chats(r.Messages))
	}
	return show(m)
}

// historyOnCluster checks history on the suite's 3-node cluster, a server
// on two nodes, across a leader move of the stream: a message stored after
// the move is in every server's history (within the time a move takes).
func historyOnCluster(k *testkit.T, impl Impl) {
	k.Helper()
	nodes := startCluster(k)
	obs := observe(k, nodes[0].url())
	var clients []*client
	for i, node := range []*natsNode{nodes[0], nodes[2]} {
		cfg := baseConfig(k, node.url())
		cfg.Replicas = 3
		c := serve(k, impl, fmt.Sprintf("H%d", i+1), cfg).dial(fmt.Sprintf("reader %d", i+1))
		c.newUser(fmt.Sprintf("reader-%d", i+1))
		clients = append(clients, c)
	}
	const ch = 5
	var all []proto.ChatMessage
	for i := range 12 {
		content := fmt.Sprintf("clustered %d", i)
		seq := obs.publish(ch, 4242, content)
		all = append(all, proto.ChatMessage{Content: content, ID: uint32(seq), UserID: 4242})
	}
	obs.stepDown(streamName)
	seq := obs.publish(ch, 4242, "after the leader moved")
	all = append(all, proto.ChatMessage{Content: "after the leader moved", ID: uint32(seq), UserID: 4242})
	want := all[len(all)-5:]
	for _, c := range clients {
		deadline := time.Now().Add(testkit.IOTimeout)
		for {
			id := c.id()
			got := c.call(proto.GetChatsRequest{ChannelID: ch, Limit: 5, RequestID: id})
			r, ok := got.(proto.GetChatsResponse)
			if ok && slices.Equal(r.Messages, want) {
				break
			}
			if time.Now().After(deadline) || !ok && got != (proto.ErrorResponse{RequestID: id, Value: proto.MsgStorageFailed}) {
				k.Fatalf("%s: GetChats(channel %d, limit 5) on a 3-node cluster (3 replicas), after the stream's leader moved and one more message was stored\nwant: %s\ngot:  %s\n(the newest, also the one acknowledged a moment ago; Storage failed. only while the move lasts)%s",
					c.who, ch, chats(want), showHistory(got), c.context())
			}
			time.Sleep(50 * time.Millisecond) // paces the retries while the leader moves; the answer is what is waited for
		}
	}
}

// chats prints a history briefly.
func chats(ms []proto.ChatMessage) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = fmt.Sprintf("%d:%d:%q", m.ID, m.UserID, m.Content)
	}
	s := strings.Join(parts, " ")
	if len(s) > 600 {
		s = s[:600] + "…"
	}
	return "[" + s + "]"
}

// Unique checks exercise 8.4: a user name and a channel name are taken once
// across every server, also when two servers are asked at the same moment,
// and a user is logged in on one server at a time.
func Unique(t *testing.T, impl Impl) {
	k := testkit.New(t, "8.4")
	n := startNATS(k)
	cfg := baseConfig(k, n.url())
	a, b := serve(k, impl, "A", cfg), serve(k, impl, "B", cfg)

	// One name asked for on two servers at once: twenty names, each sent
	// to both servers together, so that a check-then-write meets its race.
	ca, cb := a.dial("a client"), b.dial("a client")
	const racers = 20
	for i := range racers {
		name := fmt.Sprintf("dup-%d", i)
		ca.send(proto.CreateUserRequest{Name: name, Password: password(name), RequestID: uint64(1 + 2*i)})
		cb.send(proto.CreateUserRequest{Name: name, Password: password(name), RequestID: uint64(2 + 2*i)})
	}
	isAnswer := func(id uint64) func(proto.Message) bool {
		return func(m proto.Message) bool { r, ok := m.(proto.Requester); return ok && r.Request() == id }
	}
	exists := func(id uint64) proto.Message { return proto.ErrorResponse{RequestID: id, Value: proto.MsgUserExists} }
	for i := range racers {
		idA, idB := uint64(1+2*i), uint64(2+2*i)
		ra := ca.waitFor(fmt.Sprintf("registering dup-%d on A", i), isAnswer(idA))
		rb := cb.waitFor(fmt.Sprintf("registering dup-%d on B", i), isAnswer(idB))
		_, okA := ra.(proto.CreateUserResponse)
		_, okB := rb.(proto.CreateUserResponse)
		if okA == okB || (!okA && ra != exists(idA)) || (!okB && rb != exists(idB)) {
			k.Fatalf("one name (dup-%d) registered on two servers at the same moment\nwant: one 110 and one %q\ngot on A: %s%s\ngot on B: %s",
				i, proto.MsgUserExists, show(ra), notImplemented(ra), show(rb))
		}
	}
	ca.callExpect("the name is taken on every server", proto.CreateUserRequest{Name: "dup-0", Password: "x", RequestID: 100}, exists(100))
	cb.callExpect("the name is taken on every server", proto.CreateUserRequest{Name: "dup-0", Password: "x", RequestID: 101}, exists(101))
	takenNameCostsNoHash(k, impl) // takenname.go
	u1, u2 := ca.register("uniq-1"), cb.register("uniq-2")
	if u1.ID == u2.ID {
		k.Fatalf("two users registered on two servers have the same id %d; ids are unique across the servers", u1.ID)
	}

	// Channels: one name, one id, wherever it is created.
	alice, bob := a.dial("alice"), b.dial("bob")
	alice.newUser("alice")
	bob.newUser("bob")
	roomA := alice.createChannel("room")
	alice.waitFor("the new channel is announced (129) to its creator", func(m proto.Message) bool {
		ev, ok := m.(proto.ChannelCreateEvent)
		return ok && ev.Channel == roomA
	})
	roomB := bob.createChannel("room")
	if roomA != roomB {
		k.Fatalf("channel %q created on A is %+v and on B %+v; want one channel: a name is unique across the servers", "room", roomA, roomB)
	}
	alice.expectNo("a channel that existed is not announced again", func(m proto.Message) bool {
		_, ok := m.(proto.ChannelCreateEvent)
		return ok
	})
	other := bob.createChannel("other-room")
	if other.ID == roomA.ID {
		k.Fatalf("two channels have the same id %d", other.ID)
	}

	// Sessions: one at a time, across the servers.
	twice := b.dial("alice again")
	twice.callExpect("a user logged in on A logs in on B", proto.AuthenticateRequest{Name: "alice", Password: password("alice"), RequestID: 10},
		proto.ErrorResponse{RequestID: 10, Value: proto.MsgUserLoggedIn("alice")})
	alice.callExpect("logging out", proto.LogoutRequest{RequestID: 11}, proto.LogoutResponse{RequestID: 11})
	twice.login("alice") // released on A: may log in on B
	again := a.dial("alice a third time")
	again.callExpect("logged in on B now", proto.AuthenticateRequest{Name: "alice", Password: password("alice"), RequestID: 12},
		proto.ErrorResponse{RequestID: 12, Value: proto.MsgUserLoggedIn("alice")})
	twice.nc.Close() // a client that goes away ends its session
	loginEventually(k, again, "alice", "a user whose connection closed on B logs in on A")

	// Any name may be a key: two names whose standard base64 differs only
	// in '+' and '/' (not allowed in a key) are two users.
	plus, slash := ca.register(">>>"), cb.register(">>?")
	if plus.ID == slash.ID {
		k.Fatalf("users %q and %q registered with one id %d; want two users: a key must encode every name, and two names two keys", ">>>", ">>?", plus.ID)
	}
	odd := a.dial("odd names")
	odd.login(">>?")
	if got := odd.createChannel("<?>"); got.ID == 0 {
		k.Fatalf("channel %q: no id", "<?>")
	}

	// A sessions bucket that fails is a failure, not someone logged in.
	obs := observe(k, n.url())
	obs.deleteBucket(sessionsBucket)
	id := ca.id()
	ca.callExpect("a login when the sessions bucket fails (the suite deleted it)", proto.AuthenticateRequest{Name: "uniq-1", Password: password("uniq-1"), RequestID: id},
		proto.ErrorResponse{RequestID: id, Value: proto.MsgStorageFailed})
	// A users bucket that fails is a failure (or, once the server has made
	// the bucket again, a user stored in it), never a user made of the
	// revision 0 that came with a failed Create.
	obs.deleteBucket(usersBucket)
	id = cb.id()
	req := proto.CreateUserRequest{Name: "unstored", Password: password("unstored"), RequestID: id}
	switch got := cb.call(req).(type) {
	case proto.ErrorResponse:
		if got.Value != proto.MsgStorageFailed {
			k.Fatalf("%s: a registration when the users bucket fails (the suite deleted it)\nsent: %s\nwant: 100 Storage failed. (or, once the bucket is made again, 110 with a user id)\ngot:  %s%s",
				cb.who, show(req), show(got), cb.context())
		}
	case proto.CreateUserResponse:
		if got.User.ID == 0 {
			k.Fatalf("%s: a registration when the users bucket fails (the suite deleted it)\nsent: %s\nwant: 100 Storage failed., or a user with an id\ngot:  %s\n"+
				"(likely cause: the failed Create's error was dropped and the user made of the revision 0 that came with it)%s",
				cb.who, show(req), show(got), cb.context())
		}
	default:
		k.Fatalf("%s: a registration when the users bucket fails\nsent: %s\nwant: 100 Storage failed. or 110\ngot:  %s%s", cb.who, show(req), show(got), cb.context())
	}
	registerWhileDown(k, impl)
	loginRaces(k, impl)
	hostile.Accounts(k, hostileStart(impl))
	hostile.Channels(k, hostileStart(impl))
	hostile.ChannelCapRace(k, hostileStartShared(impl))
	channelExistsFromLeader(k, impl) // not from a replica behind it (replicastale.go)
}

// loginEventually retries a login until it works or testkit.IOTimeout
// passes (a session ends when its server has noticed the closed
// connection).
func loginEventually(k *testkit.T, c *client, name, why string) {
	k.Helper()
	deadline := time.Now().Add(testkit.IOTimeout)
	for {
		got := c.authenticate(name)
		if r, ok := got.(proto.AuthenticateResponse); ok && r.User.Name == name {
			c.user = r.User
			return
		}
		if time.Now().After(deadline) {
			k.Fatalf("%s: %s\nwant: 116 within %v\ngot:  %s%s", c.who, why, testkit.IOTimeout, show(got), c.context())
		}
		time.Sleep(50 * time.Millisecond) // paces the retries; the answer is what is waited for
	}
}

// Sessions checks exercise 8.5, in eight checks of its own, each under its
// own watchdog: together they take about 50 s on a quiet machine, more than
// one check's WatchdogTimeout. A session's key lives as long as its server
// and no longer; while NATS is down a login is answered Storage failed. in
// time, and once NATS is back the same server logs users in again (the
// first three, once one check: 26 s at load 5).
func Sessions(t *testing.T, impl Impl) {
	for _, c := range []struct {
		name  string
		check func(*testkit.T, Impl)
	}{
		{"held-while-server-lives", sessionHeld},
		{"dead-server-key-expires", deadServerKey},
		{"outage-longer-than-ttl", sessionOutage},
		{"restarted-server", restartedServer},
		{"refresh-without-lock", refreshWithoutLock},
		{"never-twice", neverTwice},
		{"failed-refresh", failedRefresh},
		{"lost-refresh", lostRefresh},                  // a refresh's reply lost (lostrefresh.go)
		{"relogin-after-logout", reloginAfterLogout},   // relogin.go
		{"refresh-goes-on", refreshGoesOn},             // refreshall.go
		{"recreate-without-lock", recreateWithoutLock}, // refreshall.go
		{"wiped-every-server", sessionsWiped},          // wipedsessions.go
		{"login-on-remade-bucket", loginOnRemadeBucket},
	} {
		if !t.Run(c.name, func(t *testing.T) { c.check(testkit.New(t, "8.5"), impl) }) {
			return // the later checks stand on the earlier ones' sessions
		}
	}
}

// sessionRig is what sessionLifetime's three parts stand on: a NATS, the
// suite's observer of it, and two servers, A and B, whose sessions last
// SessionTTL past their last refresh.
type sessionRig struct {
	n    *natsNode
	obs  *observer
	cfg  Config
	a, b *chatServer
	tick *time.Ticker // every TTL/5: paces the waits for a TTL to pass
}

func newSessionRig(k *testkit.T, impl Impl) *sessionRig {
	k.Helper()
	r := &sessionRig{n: startNATS(k)}
	r.obs = observe(k, r.n.url())
	r.cfg = baseConfig(k, r.n.url())
	// A refresh every TTL/3 must land in time: on a busy machine its
	// goroutine waits for a processor, so the TTL grows with the load.
	r.cfg.SessionTTL = scaled(2 * time.Second)
	// Each NATS call of a login, and each refresh, waits for a processor
	// as long: a bare second was answered Storage failed. at load 47.
	r.cfg.RequestTimeout = scaled(time.Second)
	r.a, r.b = serve(k, impl, "A", r.cfg), serve(k, impl, "B", r.cfg)
	r.tick = time.NewTicker(r.cfg.SessionTTL / 5)
	k.Cleanup(r.tick.Stop)
	return r
}

// heldUsers are the users sessionHeld keeps logged in on one server: four,
// so that a refresh of only some sessions each time (one, say) leaves one
// unrefreshed for a TTL within the two the check lasts, whatever the order
// the refresh takes them in.
var heldUsers = []string{"alice", "dave", "erin", "fay"}

// sessionHeld checks that a session's key lives as long as its server,
// which refreshes it within the bucket's TTL: every session of it, past
// the TTL.
func sessionHeld(k *testkit.T, impl Impl) {
	r := newSessionRig(k, impl)
	cfg := r.cfg
	for _, name := range heldUsers {
		r.a.dial(name).newUser(name)
	}
	other := r.b.dial("alice elsewhere")
	until := time.Now().Add(2 * cfg.SessionTTL)
	for time.Now().Before(until) {
		for _, name := range heldUsers {
			id := other.id()
			other.callExpect(fmt.Sprintf("%s is logged in on A, whose session keys must outlive the bucket's TTL (%v) while A lives", name, cfg.SessionTTL),
				proto.AuthenticateRequest{Name: name, Password: password(name), RequestID: id},
				proto.ErrorResponse{RequestID: id, Value: proto.MsgUserLoggedIn(name)})
		}
		<-r.tick.C
	}
}

// deadServerKey checks that a session's key lives no longer than its
// server: the key of a server that died (the suite writes it) expires
// after the TTL, and then its user logs in.
func deadServerKey(k *testkit.T, impl Impl) {
	r := newSessionRig(k, impl)
	alice := r.a.dial("alice")
	alice.newUser("alice")
	bob := r.b.dial("bob")
	bob.register("bob")
	ghost := alice.call(proto.GetUserRequest{Name: "bob", RequestID: alice.id()})
	gu, ok := ghost.(proto.GetUserResponse)
	if !ok {
		k.Fatalf("alice: GetUser bob\nwant: 114\ngot: %s", show(ghost))
	}
	r.obs.putSession(gu.User.ID)
	id := bob.id()
	bob.callExpect("bob's key was written by a server that then died", proto.AuthenticateRequest{Name: "bob", Password: password("bob"), RequestID: id},
		proto.ErrorResponse{RequestID: id, Value: proto.MsgUserLoggedIn("bob")})
	loginEventually(k, bob, "bob", "the key of a dead server expires after the TTL") // within IOTimeout > TTL
}

// sessionOutage checks that while NATS is down a login is answered
// Storage failed. in time, and that once NATS is back, after an outage
// longer than the TTL, the same server logs users in again and its
// sessions are still its own.
func sessionOutage(k *testkit.T, impl Impl) {
	r := newSessionRig(k, impl)
	n, cfg, tick := r.n, r.cfg, r.tick
	alice, dave := r.a.dial("alice"), r.a.dial("dave")
	alice.newUser("alice")
	dave.newUser("dave") // two sessions on A, whose keys both expire in the outage
	other := r.b.dial("alice elsewhere")
	id := other.id()
	other.callExpect("alice is logged in on A", proto.AuthenticateRequest{Name: "alice", Password: password("alice"), RequestID: id},
		proto.ErrorResponse{RequestID: id, Value: proto.MsgUserLoggedIn("alice")})

	carol := r.a.dial("carol")
	carol.register("carol")
	n.stop()
	start := time.Now()
	got := carol.authenticate("carol")
	if e, ok := got.(proto.ErrorResponse); !ok || e.Value != proto.MsgStorageFailed {
		k.Fatalf("carol: a login while NATS is down\nwant: 100 %q\ngot:  %s%s", proto.MsgStorageFailed, show(got), carol.context())
	}
	if took := time.Since(start); took > cfg.RequestTimeout+testkit.IOTimeout {
		k.Fatalf("a login while NATS is down took %v to be answered; want about the request timeout, %v", took, cfg.RequestTimeout)
	}
	// The outage outlasts the TTL: alice's key expires meanwhile, and
	// nobody else has taken it when NATS is back — she is still logged in
	// on A (its refresh makes the key again), not thrown out.
	for time.Since(start) < 2*cfg.SessionTTL {
		<-tick.C
	}
	n.start()
	loginEventually(k, carol, "carol", "once NATS is back, the same server logs users in")
	deadline := time.Now().Add(testkit.IOTimeout)
	for {
		// B reconnects on its own schedule: until it has, it says Storage failed.
		id = other.id()
		got = other.call(proto.AuthenticateRequest{Name: "alice", Password: password("alice"), RequestID: id})
		if got != (proto.ErrorResponse{RequestID: id, Value: proto.MsgStorageFailed}) || time.Now().After(deadline) {
			break
		}
		<-tick.C
	}
	if want := (proto.ErrorResponse{RequestID: id, Value: proto.MsgUserLoggedIn("alice")}); got != want {
		k.Fatalf("%s: alice is still logged in on A after an outage of NATS longer than the TTL (her key expired meanwhile, and nobody took it)\nwant: %s\ngot:  %s\n(a refresh that finds the key gone makes it again; only a key another server has is lost)%s", other.who, show(want), show(got), other.context())
	}
	// B sees her key: A's refresh has made it again. A refresh later, her
	// own connection must still be open and logged in — a server that makes
	// the key and then ends the session anyway holds a key for nobody.
	for range 2 {
		<-tick.C
	}
	id = alice.id()
	got = alice.call(proto.GetChannelsRequest{RequestID: id})
	if _, ok := got.(proto.GetChannelsResponse); !ok {
		k.Fatalf("%s: GetChannels on A after an outage of NATS longer than the TTL, once A had made her key again\nwant: 120 (she is logged in on A)\ngot:  %s\n(likely cause: the refresh ends the session whenever the key was not at its lease; only ErrKeyExists from the Create — another server's key — means the session is lost)%s", alice.who, show(got), alice.context())
	}
}

// failedRefresh checks that a refresh whose write failed changes nothing:
// server F is cut off from NATS (ackDropper.partition) for longer than a
// refresh period, so that at least one refresh of alice's key fails, and
// for much less than the TTL (30 s), so that her key is still there,
// F's, when F is back. Then F's next refresh must update it (its revision
// moves on) and alice stays logged in on F. A keeper that records the
// revision of a failed write (0) as its lease finds the key at another
// revision and throws her out, though the key is its own.
func failedRefresh(k *testkit.T, impl Impl) {
	k.Helper()
	n := startNATS(k)
	obs := observe(k, n.url())
	proxy := startAckDropper(k, n.url())
	cfg := baseConfig(k, proxy.url())
	cfg.SessionTTL = 30 * time.Second // a refresh every 10 s
	cfg.RequestTimeout = time.Second
	f := serve(k, impl, "F", cfg)
	alice := f.dial("alice")
	alice.newUser("alice")
	before := obs.sessionRevision(alice.user.ID)
	if before == 0 {
		k.Fatalf("%s is logged in on F, and the bucket %s has no key for her (s.%d)", alice.who, sessionsBucket, alice.user.ID)
	}

	proxy.partition()
	cut := time.Now()
	<-time.After(cfg.SessionTTL/3 + 2*cfg.RequestTimeout) // the partition's length is what the check is about
	proxy.heal()

	deadline := time.Now().Add(stallNoticed + cfg.SessionTTL/3 + testkit.IOTimeout)
	for obs.sessionRevision(alice.user.ID) == before && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond) // paces the polls of NATS, which has no event to wait for
	}
	if got := obs.sessionRevision(alice.user.ID); got == before || got == 0 {
		k.Fatalf("server F was cut off from NATS for %v (a refresh every %v failed meanwhile; the TTL is %v), then reached it again\n"+
			"want: F's next refresh updates alice's key (its revision moves on from %d), and she stays logged in on F\n"+
			"got:  revision %d (0: no key) %v after the partition healed\n"+
			"(likely cause: a refresh whose write failed still records its revision, 0, as the lease; keep the old lease: the key is still F's)%s",
			time.Since(cut).Round(time.Second), cfg.SessionTTL/3, cfg.SessionTTL, before, got, stallNoticed+cfg.SessionTTL/3+testkit.IOTimeout, alice.context())
	}
	id := alice.id()
	got := alice.call(proto.GetChannelsRequest{RequestID: id})
	if _, ok := got.(proto.GetChannelsResponse); !ok {
		k.Fatalf("%s: GetChannels on F after a partition shorter than the TTL, once F had refreshed her key\nwant: 120 (she is logged in on F)\ngot:  %s\n"+
			"(likely cause: a refresh that failed while NATS was away made the keeper lose track of its lease, and end the session)%s",
			alice.who, show(got), alice.context())
	}
}

// restartedServer checks a server that died with sessions (here: closed
// while NATS was down, so that it could release no key — as after kill
// -9) and starts again on its DBPath: its users log in again at once, not
// after the keys' TTL (30 s here). And a second server on a DBPath in use
// is refused.
func restartedServer(k *testkit.T, impl Impl) {
	k.Helper()
	n := startNATS(k)
	cfg := baseConfig(k, n.url())
	cfg.SessionTTL = 30 * time.Second
	a := serve(k, impl, "R", cfg)
	alice := a.dial("alice")
	alice.newUser("alice")

	if srv, err := impl.NewServer(a.cfg); err == nil {
		srv.Close()
		k.Fatalf("NewServer with the DBPath %s of server R, which runs: no error\nwant: an error: two servers on one store (the embedded NATS's, and the owner id of the session keys) corrupt it — lock DBPath", a.cfg.DBPath)
	}

	n.stop()
	a.srv.Close() // no NATS: alice's key stays, as after kill -9
	n.start()
	a.start()
	again := a.dial("alice after R restarted")
	start := time.Now()
	loginEventually(k, again, "alice", fmt.Sprintf("server R died with alice logged in and started again on its DBPath: her key is its previous run's (cleared at start), not to be waited out (the TTL is %v)", cfg.SessionTTL))
	if took := time.Since(start); took > cfg.SessionTTL/2 {
		k.Fatalf("alice logged in again %v after server R restarted; want at once (the TTL is %v)", took, cfg.SessionTTL)
	}
}

// refreshWithoutLock checks that the session keeper does not hold the
// server's mutex while it writes to NATS: the link to NATS stalls at the
// moment a refresh's write of a session key reaches the proxy (the write is
// lost, so it hangs until the request timeout or a reconnect), and a
// request that needs no NATS — GetChannels — is answered at once all along.
// The stall waits for the write, not the clock: a blind stall could fall
// while the keeper waited in another call (its check of the users bucket)
// and end the check before the refresh's write ever hung.
func refreshWithoutLock(k *testkit.T, impl Impl) {
	k.Helper()
	n := startNATS(k)
	proxy := startAckDropper(k, n.url())
	cfg := baseConfig(k, proxy.url())
	cfg.SessionTTL = 900 * time.Millisecond // a refresh every 300 ms
	// A refresh that holds the mutex holds it for a stalled write's whole
	// RequestTimeout: twice the bound below, at any load.
	cfg.RequestTimeout = scaled(2 * time.Second)
	p := serve(k, impl, "P", cfg)
	alice, bob := p.dial("alice"), p.dial("bob")
	alice.newUser("alice")
	bob.newUser("bob")

	stalled := stallSessionWrite(k, proxy, cfg)
	slow := scaled(time.Second)
	for time.Since(stalled) < cfg.RequestTimeout+cfg.SessionTTL {
		start := time.Now()
		id := bob.id()
		got := bob.call(proto.GetChannelsRequest{RequestID: id})
		if _, ok := got.(proto.GetChannelsResponse); !ok {
			k.Fatalf("%s: GetChannels while the link to NATS stalls\nwant: 120 (the channels are in the server's memory)\ngot:  %s%s", bob.who, show(got), bob.context())
		}
		if took := time.Since(start); took > slow {
			k.Fatalf("%s: GetChannels, %v after the link to NATS stalled under a refresh's write of a session key (it waits for "+
				"its answer until the request timeout, %v), took %v; want at once (under %v): the session keeper holds the "+
				"server's mutex across its writes to NATS — copy the sessions under it, write without it%s",
				bob.who, start.Sub(stalled).Round(time.Millisecond), cfg.RequestTimeout, took.Round(time.Millisecond), slow, bob.context())
		}
	}
}

// neverTwice checks a partition: server P, cut off from NATS, holds alice's
// session; her key expires and she logs in on server Q; when P reaches NATS
// again, it must not take her key back (its refresh finds another server's
// key: an update of its own revision fails) and ends her session there —
// her connection to P is closed. She stays logged in on Q.
func neverTwice(k *testkit.T, impl Impl) {
	k.Helper()
	n := startNATS(k)
	proxy := startAckDropper(k, n.url())
	cfg := baseConfig(k, proxy.url())
	cfg.SessionTTL = scaled(2 * time.Second) // as the session rig's, and for its reason
	cfg.RequestTimeout = scaled(time.Second)
	p := serve(k, impl, "P", cfg)
	qcfg := cfg
	qcfg.NATSURL = n.url()
	q := serve(k, impl, "Q", qcfg)
	onP := p.dial("alice")
	onP.newUser("alice")

	proxy.partition()
	onQ := q.dial("alice elsewhere")
	loginEventually(k, onQ, "alice", fmt.Sprintf("server P is cut off from NATS: alice's key there expires after the TTL, %v", cfg.SessionTTL))
	proxy.heal()

	deadline := time.Now().Add(stallNoticed + testkit.IOTimeout)
	for {
		m, err := onP.tryNext(time.Until(deadline))
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				k.Fatalf("%s: server P was cut off from NATS, alice's key expired and she logged in on server Q; then P reached NATS again\n"+
					"want: P ends her session there (closes her connection) within %v: its refresh must update the revision it wrote, and finds Q's key\n"+
					"got:  her connection to P still open — alice is logged in on two servers%s", onP.who, stallNoticed+testkit.IOTimeout, onP.context())
			}
			break // closed: her session on P is over
		}
		_ = m // events, or a notice before the close
	}
	id := onQ.id()
	third := q.dial("alice a third time")
	third.callExpect("alice is still logged in on Q", proto.AuthenticateRequest{Name: "alice", Password: password("alice"), RequestID: id},
		proto.ErrorResponse{RequestID: id, Value: proto.MsgUserLoggedIn("alice")})
}

// scaled is d stretched as every wait of the suite is on a busy machine
// (testkit.TimeScale).
func scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) * testkit.TimeScale)
}
