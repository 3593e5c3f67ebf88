package chatscaletest

import (
	"fmt"
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
func DurableEcho(t *testing.T, impl Impl) {
	k := testkit.New(t, "8.1")
	n := startNATS(k)
	obs := observe(k, n.url())
	cfg := baseConfig(k, n.url())
	a, b := serve(k, impl, "A", cfg), serve(k, impl, "B", cfg)
	alice, bob := a.dial("alice"), b.dial("bob")
	alice.newUser("alice")
	bob.newUser("bob")
	ch := alice.createChannel("durable")
	alice.join(ch.ID)
	bob.join(ch.ID)

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

	// A blip: NATS goes and comes back while a write waits for its
	// acknowledgement.
	n.stop()
	alice.send(proto.WriteChat{Content: "during a blip"})
	n.start()
	blip := proto.ReceiveChat{ChannelID: ch.ID, Content: "during a blip", UserID: alice.user.ID}
	got := alice.waitFor("a write during a short outage is retried until NATS is back", func(m proto.Message) bool {
		_, isErr := m.(proto.Error)
		return m == blip || isErr
	})
	if got != blip {
		k.Fatalf("alice: a write sent while NATS restarted (back within the publish timeout, %v)\nwant: the echo %+v\ngot:  %s\n(retry with the same message id until the timeout)%s%s",
			cfg.PublishTimeout, blip, show(got), notImplemented(got), alice.context())
	}
	expectStoredOnce(k, obs, ch.ID, "during a blip")

	// An outage longer than the publish timeout.
	n.stop()
	start := time.Now()
	alice.send(proto.WriteChat{Content: "while NATS is down"})
	down := proto.ReceiveChat{ChannelID: ch.ID, Content: "while NATS is down", UserID: alice.user.ID}
	got = alice.waitFor("a write while NATS is down", func(m proto.Message) bool {
		_, isErr := m.(proto.Error)
		return isErr || m == down
	})
	if got != (proto.Error{Value: msgNotStored}) {
		k.Fatalf("alice: a write while NATS is down\nwant: %s\ngot:  %s%s%s", show(proto.Error{Value: msgNotStored}), show(got), notImplemented(got), alice.context())
	}
	if took := time.Since(start); took > cfg.PublishTimeout+testkit.IOTimeout {
		k.Fatalf("the answer to a write while NATS is down took %v; want about the publish timeout, %v", took, cfg.PublishTimeout)
	}
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
	for i := range 5 {
		expectStoredOnce(k, obs, ch.ID, fmt.Sprintf("durable %d", i))
	}
	expectStoredOnce(k, obs, ch.ID, after.Content)

	ackLost(k, impl)
	hostile.Connections(k, hostileStart(impl))
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
	n := 0
	for _, m := range obs.messages(ch) {
		if m.body.Content == content {
			n++
		}
	}
	if n != 1 {
		k.Fatalf("the stream holds %q %d times in %s; want once: acknowledged means stored, and a retry with the same message id is dropped by the stream", content, n, subject(ch))
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
	alice.expectNoChat("nothing more: every message is delivered once")
	bob.expectNoChat("nothing more: every message is delivered once")
	carol.expectNoChat("nothing of her channel was published after the restart, and nothing may come twice")

	oneOrderOnCluster(k, impl)
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
// the same newest N, oldest first, with the stream's sequence as the id.
func History(t *testing.T, impl Impl) {
	k := testkit.New(t, "8.3")
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

	a.restart()
	alice = a.dial("alice again")
	alice.login("alice")
	expect(alice, x.ID, 5, inX[len(inX)-5:], "a restarted server has the same history: it lives in the stream")
	hostile.Output(k, hostileStart(impl))
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
	other := bob.createChannel("other room")
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
	hostile.Accounts(k, hostileStart(impl))
	hostile.Channels(k, hostileStart(impl))
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

// Sessions checks exercise 8.5: a session's key lives as long as its server
// (which refreshes it within the bucket's TTL) and no longer (the key of a
// server that died expires); while NATS is down a login is answered
// Storage failed. in time, and once NATS is back the same server logs
// users in again.
func Sessions(t *testing.T, impl Impl) {
	k := testkit.New(t, "8.5")
	n := startNATS(k)
	obs := observe(k, n.url())
	cfg := baseConfig(k, n.url())
	cfg.SessionTTL = 2 * time.Second
	cfg.RequestTimeout = time.Second
	a, b := serve(k, impl, "A", cfg), serve(k, impl, "B", cfg)
	alice, dave := a.dial("alice"), a.dial("dave")
	alice.newUser("alice")
	dave.newUser("dave")
	other := b.dial("alice elsewhere")

	// Held while their server lives, past the TTL: every session of it.
	until := time.Now().Add(2 * cfg.SessionTTL)
	tick := time.NewTicker(cfg.SessionTTL / 5)
	defer tick.Stop()
	for time.Now().Before(until) {
		for _, name := range []string{"alice", "dave"} {
			id := other.id()
			other.callExpect(fmt.Sprintf("%s is logged in on A, whose session keys must outlive the bucket's TTL (%v) while A lives", name, cfg.SessionTTL),
				proto.AuthenticateRequest{Name: name, Password: password(name), RequestID: id},
				proto.ErrorResponse{RequestID: id, Value: proto.MsgUserLoggedIn(name)})
		}
		<-tick.C
	}

	// The key of a server that died expires.
	bob := b.dial("bob")
	bob.register("bob")
	ghost := alice.call(proto.GetUserRequest{Name: "bob", RequestID: alice.id()})
	gu, ok := ghost.(proto.GetUserResponse)
	if !ok {
		k.Fatalf("alice: GetUser bob\nwant: 114\ngot: %s", show(ghost))
	}
	obs.putSession(gu.User.ID)
	id := bob.id()
	bob.callExpect("bob's key was written by a server that then died", proto.AuthenticateRequest{Name: "bob", Password: password("bob"), RequestID: id},
		proto.ErrorResponse{RequestID: id, Value: proto.MsgUserLoggedIn("bob")})
	loginEventually(k, bob, "bob", "the key of a dead server expires after the TTL") // within IOTimeout > TTL

	// NATS down: a clear answer in time; back: the same server works.
	carol := a.dial("carol")
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
		k.Fatalf("%s: alice is still logged in on A after the outage\nwant: %s\ngot:  %s%s", other.who, show(want), show(got), other.context())
	}
}
