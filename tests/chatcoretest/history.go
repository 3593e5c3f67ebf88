package chatcoretest

import (
	"fmt"
	"sync"
	"testing"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// History checks exercise 7.4: chat messages, their history, and the group
// commit. A message goes to every connection in the sender's channel, the
// sender included, and to nobody else; when its echo arrives it is in the
// database already (the original kept it in memory for up to a second, so
// a crash lost messages everybody had seen); messages of one short window
// share one transaction; GetChats gives the newest N oldest first; ids keep
// growing across a restart (the original handed lost ids out again).
func History(t *testing.T, impl Impl) {
	k := testkit.New(t, "7.4")
	e := start(k, impl, Config{})

	check(k, e, "fan-out", func(k *testkit.T, e *env) {
		a, b, c := e.login("fan-a"), e.login("fan-b"), e.login("fan-c")
		a.settle()
		a.send(proto.WriteChat{Content: "too early"})
		a.expect("a chat message before joining a channel", proto.Error{Value: proto.MsgNoChannel})
		anon := e.dial("an unauthenticated client")
		anon.send(proto.WriteChat{Content: "hello?"})
		anon.expect("a chat message without a session", proto.Error{Value: proto.MsgNotAuthorized})

		one, two := a.createChannel("fan-one"), a.createChannel("fan-two")
		a.join(one.ID)
		b.join(one.ID)
		c.join(two.ID)
		a.settle()
		b.settle()
		c.settle()
		a.send(proto.WriteChat{Content: "hello, one"})
		msg := proto.ReceiveChat{ChannelID: one.ID, Content: "hello, one", UserID: a.user.ID}
		a.expect("a chat message comes back to its sender", msg)
		b.expect("a chat message goes to everyone in the channel", msg)
		c.expectNothing("a chat message goes to nobody outside the channel")

		b.send(proto.LogoutRequest{RequestID: 500})
		b.expect("a logout", proto.UserLogoutEvent{UserID: b.user.ID}, proto.LogoutResponse{RequestID: 500})
		a.say(one.ID, "after ben left")
		b.authenticate("fan-b")
		b.expectNothing("a logged-out connection left its channel: it hears nothing of it")
		b.send(proto.WriteChat{Content: "am I still in?"})
		b.expect("after a new login the connection must join again", proto.Error{Value: proto.MsgNoChannel})
	})

	check(k, e, "durable-at-echo", func(k *testkit.T, e *env) {
		a := e.login("dur-a")
		ch := a.createChannel("dur")
		a.join(ch.ID)
		db := e.openDB()
		for i := range 5 {
			content := fmt.Sprintf("durable %d %d", i, k.Rand().Uint64())
			a.say(ch.ID, content)
			var n int
			if err := db.QueryRow(`SELECT count(*) FROM chat_messages WHERE content = ? AND channel_id = ? AND user_id = ?`,
				content, ch.ID, a.user.ID).Scan(&n); err != nil {
				k.Fatalf("reading chat_messages: %v", err)
			}
			if n != 1 {
				k.Fatalf("%s saw the echo of %q, but chat_messages holds it %d times: a message must be committed "+
					"before it is sent to anyone (the echo is the acknowledgement); the original kept messages in "+
					"memory for up to a second, and a crash lost what everyone had seen", a.who, content, n)
			}
		}
	})

	check(k, e, "history", func(k *testkit.T, e *env) {
		a, b := e.login("his-a"), e.login("his-b")
		ch, other := a.createChannel("his"), a.createChannel("his-other")
		a.join(ch.ID)
		b.join(other.ID)
		a.settle()
		var sent []string
		for i := range 5 {
			sent = append(sent, fmt.Sprintf("m%d", i))
			a.say(ch.ID, sent[i])
			b.say(other.ID, "noise")
		}
		m := a.call(proto.GetChatsRequest{RequestID: 1, ChannelID: ch.ID, Limit: 3})
		r, ok := m.(proto.GetChatsResponse)
		if !ok || r.ChannelID != ch.ID || r.RequestID != 1 || len(r.Messages) != 3 {
			k.Fatalf("GetChats limit 3: want 106 {channel_id:%d, messages:[3 items], request_id:1}, got %s%s", ch.ID, show(m), a.context())
		}
		for i, msg := range r.Messages {
			if want := sent[2+i]; msg.Content != want || msg.UserID != a.user.ID {
				k.Fatalf("GetChats limit 3 must give the 3 newest messages of the channel, oldest first: %v\n  got %+v",
					sent[2:], r.Messages)
			}
			if i > 0 && msg.ID <= r.Messages[i-1].ID {
				k.Fatalf("GetChats: ids must grow from oldest to newest, got %+v", r.Messages)
			}
		}
		all, _ := a.call(proto.GetChatsRequest{RequestID: 2, ChannelID: ch.ID, Limit: 100}).(proto.GetChatsResponse)
		if len(all.Messages) != 5 {
			k.Fatalf("GetChats limit 100 of a channel with 5 messages: want 5, got %+v", all.Messages)
		}
		a.callExpect("GetChats limit 0", proto.GetChatsRequest{RequestID: 3, ChannelID: ch.ID, Limit: 0},
			proto.GetChatsResponse{RequestID: 3, ChannelID: ch.ID, Messages: []proto.ChatMessage{}})
		a.callExpect("GetChats of an unknown channel", proto.GetChatsRequest{RequestID: 4, ChannelID: 99999, Limit: 5},
			proto.GetChatsResponse{RequestID: 4, ChannelID: 99999, Messages: []proto.ChatMessage{}})
		anon := e.dial("anon")
		anon.callExpect("GetChats without a session", proto.GetChatsRequest{RequestID: 5, ChannelID: ch.ID, Limit: 5},
			proto.ErrorResponse{RequestID: 5, Value: proto.MsgNotAuthorized})
	})

	check(k, e, "batch-bound", func(k *testkit.T, _ *env) { checkBatchBound(k, impl) })
	check(k, e, "batch-released", func(k *testkit.T, _ *env) { checkBatchReleased(k, impl) })
	check(k, e, "group-commit", func(k *testkit.T, _ *env) {
		var mu sync.Mutex
		var batches []int
		e := start(k, impl, Config{CommitWindow: 50e6, OnCommit: func(n int) {
			mu.Lock()
			batches = append(batches, n)
			mu.Unlock()
		}})
		const writers = 12
		var cs []*client
		for i := range writers {
			cs = append(cs, e.login(fmt.Sprintf("gc%02d", i)))
		}
		ch := cs[0].createChannel("gc")
		for _, c := range cs {
			c.join(ch.ID)
		}
		for i, c := range cs {
			c.send(proto.WriteChat{Content: fmt.Sprintf("together %d", i)})
		}
		for i, c := range cs {
			c.waitFor("every message is delivered", proto.ReceiveChat{ChannelID: ch.ID, Content: fmt.Sprintf("together %d", i), UserID: c.user.ID})
		}
		mu.Lock()
		defer mu.Unlock()
		total, biggest := 0, 0
		for _, n := range batches {
			total += n
			biggest = max(biggest, n)
		}
		if total != writers {
			k.Fatalf("OnCommit reported batches %v (%d messages); want the %d messages sent, each in one committed "+
				"batch (call OnCommit after each commit with its size)", batches, total, writers)
		}
		if biggest < 2 {
			k.Fatalf("%d messages sent at once, with a commit window of 50ms, were committed one per transaction "+
				"(batches %v): gather what arrives while a batch waits or commits, and commit it together — one fsync "+
				"for all (group commit)", writers, batches)
		}
	})

	check(k, e, "ids-survive-restart", func(k *testkit.T, _ *env) {
		e := start(k, impl, Config{})
		a := e.login("ids")
		ch := a.createChannel("ids")
		a.join(ch.ID)
		a.say(ch.ID, "before")
		before, _ := a.call(proto.GetChatsRequest{RequestID: 90, ChannelID: ch.ID, Limit: 10}).(proto.GetChatsResponse)
		a.nc.Close()
		e.restart()
		a = e.dial("ids, after a restart")
		a.authenticate("ids")
		a.join(ch.ID)
		a.say(ch.ID, "after")
		m := a.call(proto.GetChatsRequest{RequestID: 91, ChannelID: ch.ID, Limit: 10})
		after, ok := m.(proto.GetChatsResponse)
		if !ok || len(before.Messages) != 1 || len(after.Messages) != 2 || after.Messages[0] != before.Messages[0] ||
			after.Messages[1].ID <= before.Messages[0].ID {
			k.Fatalf("a message written before a restart must still be there, and the next one must get a larger id "+
				"(ids are never reused: the original gave a lost message's id to the next one)\n  before: %+v\n   after: %s",
				before.Messages, show(m))
		}
	})

	historyLimits(k, impl, e)
	check(k, e, "history-limits", func(k *testkit.T, _ *env) { checkHistoryLimits(k, impl) })
	check(k, e, "failed-commit", func(k *testkit.T, _ *env) { checkFailedCommit(k, impl) })
	check(k, e, "storage-failure", func(k *testkit.T, _ *env) { checkStorageFailure(k, impl, "History") })
	chatFlood(k, impl) // each user's budget of chat bytes (chatflood.go)
}
