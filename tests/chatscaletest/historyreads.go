package chatscaletest

import (
	"fmt"
	"slices"
	"sync/atomic"

	nats "github.com/nats-io/nats.go"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// publishRaw stores data as it is on channel ch's subject, as a server of
// another version, or a tool, might: the stream takes any body.
func (o *observer) publishRaw(ch uint32, data []byte) uint64 {
	o.k.Helper()
	ctx, cancel := o.ctx()
	defer cancel()
	ack, err := o.js.PublishMsg(ctx, &nats.Msg{Subject: subject(ch), Data: data})
	if err != nil {
		o.k.Fatalf("the suite could not publish to %s: %v", subject(ch), err)
	}
	return ack.Sequence
}

// historySkipsUndecodable checks that one message the server cannot decode
// costs the history that message only: the stream takes any body, and a
// channel holding one (written by a tool, by another version of the
// server) must not answer Storage failed. for ever. The live delivery
// skips it; GetChats must too.
func historySkipsUndecodable(k *testkit.T, impl Impl) {
	k.Helper()
	n := startNATS(k)
	obs := observe(k, n.url())
	srv := serve(k, impl, "U", baseConfig(k, n.url()))
	una := srv.dial("una")
	una.newUser("una")
	ch := una.createChannel("undecodable")
	una.join(ch.ID)

	const junk = "not a chat message {"
	before := obs.publish(ch.ID, una.user.ID, "before the undecodable one")
	bad := obs.publishRaw(ch.ID, []byte(junk))
	after := obs.publish(ch.ID, una.user.ID, "after the undecodable one")
	una.expectChats("messages stored around one the server cannot decode (it delivers none for that one)", []proto.ReceiveChat{
		{ChannelID: ch.ID, Content: "before the undecodable one", UserID: una.user.ID},
		{ChannelID: ch.ID, Content: "after the undecodable one", UserID: una.user.ID},
	})
	want := []proto.ChatMessage{
		{Content: "before the undecodable one", ID: uint32(before), UserID: una.user.ID},
		{Content: "after the undecodable one", ID: uint32(after), UserID: una.user.ID},
	}
	req := proto.GetChatsRequest{ChannelID: ch.ID, Limit: 10, RequestID: una.id()}
	got := una.call(req)
	if r, ok := got.(proto.GetChatsResponse); !ok || !slices.Equal(r.Messages, want) {
		k.Fatalf("%s: GetChats of a channel whose message %d is not a chat message (the body %q, stored by the suite between two good ones)\nsent: %s\nwant: 106 with %s (the one that cannot be decoded skipped, as the live delivery skips it)\ngot:  %s\n"+
			"likely cause: the history gives up at a message it cannot decode: one bad body makes the channel's history Storage failed. for as long as it is among the newest; skip it%s%s",
			una.who, bad, junk, show(req), chats(want), showHistory(got), notImplemented(got), una.context())
	}
}

// historyMakesNoConsumer checks that GetChats reads the stream by number (a
// direct get) and makes no consumer, not even one it deletes after: each
// consumer made is a request to the stream's leader and, on a cluster, a
// raft group of its own set up and torn down, for every history of every
// client. The suite counts the stream's advisories of consumers created
// while one server answers 20 GetChats.
func historyMakesNoConsumer(k *testkit.T, impl Impl) {
	k.Helper()
	n := startNATS(k)
	obs := observe(k, n.url())
	srv := serve(k, impl, "C", baseConfig(k, n.url()))
	cal := srv.dial("cal")
	cal.newUser("cal")
	ch := cal.createChannel("counted")
	for i := range 12 {
		obs.publish(ch.ID, cal.user.ID, fmt.Sprintf("counted %d", i))
	}
	var created atomic.Int64
	sub, err := obs.nc.Subscribe("$JS.EVENT.ADVISORY.CONSUMER.CREATED."+streamName+".>", func(*nats.Msg) { created.Add(1) })
	if err != nil {
		k.Fatalf("the suite subscribes to the stream's advisories: %v", err)
	}
	defer sub.Unsubscribe()
	if err := obs.nc.FlushTimeout(testkit.IOTimeout); err != nil {
		k.Fatalf("the suite subscribes to the stream's advisories: %v", err)
	}
	const reads = 20
	for range reads {
		if got := cal.history(ch.ID, 5); len(got) != 5 {
			k.Fatalf("%s: GetChats(channel %d, limit 5) of a channel of 12 messages\nwant: 106 with 5 messages\ngot:  106 with %s%s", cal.who, ch.ID, chats(got), cal.context())
		}
	}
	// The advisories of the last reads are in flight: a round trip to NATS
	// after them brings every one that was published before it.
	if err := obs.nc.FlushTimeout(testkit.IOTimeout); err != nil {
		k.Fatalf("the suite's connection to NATS: %v", err)
	}
	if got := created.Load(); got > 2 {
		k.Fatalf("%s: %d GetChats(channel %d, limit 5) on server C\nsent: %d × %s\nwant: no consumer made (±2: the server's own live delivery may make one again)\ngot:  %d consumers created on the stream %s while they were answered\n"+
			"likely cause: each history makes a consumer (deleted after or not): a request to the stream's leader and, on a cluster, a raft group set up and torn down per GetChats — read by number instead (a direct get from the sequence where the newest N start)%s",
			cal.who, reads, ch.ID, reads, show(proto.GetChatsRequest{ChannelID: ch.ID, Limit: 5}), got, streamName, cal.context())
	}
}

// historyWithoutStream checks that GetChats while the stream is gone is
// Storage failed., never an empty history: the channel had messages, and
// "none" is an answer a client keeps. The suite deletes the stream under a
// server that reaches NATS through the proxy, which drops the server's
// requests to make it again, so that it stays gone while GetChats is
// answered.
func historyWithoutStream(k *testkit.T, impl Impl) {
	k.Helper()
	n := startNATS(k)
	obs := observe(k, n.url())
	proxy := startAckDropper(k, n.url())
	cfg := baseConfig(k, proxy.url())
	srv := serve(k, impl, "G", cfg)
	gus := srv.dial("gus")
	gus.newUser("gus")
	ch := gus.createChannel("gone")
	obs.publish(ch.ID, gus.user.ID, "in a stream about to be deleted")

	proxy.setHook(&frameHook{drop: "$JS.API.STREAM.CREATE." + streamName})
	obs.deleteStream(streamName)
	req := proto.GetChatsRequest{ChannelID: ch.ID, Limit: 10, RequestID: gus.id()}
	got := gus.call(req)
	proxy.setHook(&frameHook{}) // server G may make the stream again
	// A server on the same NATS, not behind the proxy, makes the stream
	// again, as after a wipe, before any verdict: a server whose stream is
	// gone may not close in time, and that is not this check's finding.
	serve(k, impl, "G2", baseConfig(k, n.url()))
	if want := (proto.ErrorResponse{RequestID: req.RequestID, Value: proto.MsgStorageFailed}); got != want {
		k.Fatalf("%s: GetChats of a channel with one message, after the suite deleted the stream %s (and the proxy kept the server from making it again)\nsent: %s\nwant: %s\ngot:  %s\n"+
			"likely cause: a missing stream is read as a channel without messages: an empty history says the channel has none, and the client believes it; a stream that is gone is a storage failure (and a sign to make it again)%s%s",
			gus.who, streamName, show(req), show(want), showHistory(got), notImplemented(got), gus.context())
	}
}
