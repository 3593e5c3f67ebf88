package chatscaletest

import (
	"fmt"
	"slices"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// historyAcrossChannels checks that a history's cost does not grow with
// the messages of OTHER channels: channel 78's two messages are 5,000
// stream messages apart (channel 77's in between), and GetChats(78, 2)
// must find where its newest two start in a few requests. A walk back one
// sequence at a time asks NATS once per sequence in between, and each
// answer is channel 78's newest message again: the suite's proxy counts
// the chat messages NATS sends the server, so the count, not the clock,
// tells the walk from a halving.
func historyAcrossChannels(k *testkit.T, impl Impl) {
	k.Helper()
	n := startNATS(k)
	obs := observe(k, n.url())
	writer := serve(k, impl, "W", baseConfig(k, n.url())) // makes the stream
	const ch, other = 78, 77
	first := obs.publish(ch, 4242, "before the others")
	obs.publishMany(other, 4242, longChannel, func(i int) string { return fmt.Sprintf("other %d", i) })
	last := obs.publish(ch, 4242, "after the others")
	want := []proto.ChatMessage{
		{Content: "before the others", ID: uint32(first), UserID: 4242},
		{Content: "after the others", ID: uint32(last), UserID: 4242},
	}
	proxy := startAckDropper(k, n.url())
	srv := serve(k, impl, "G", baseConfig(k, proxy.url()))
	gus := srv.dial("gus")
	gus.newUser("gus")
	writer.srv.Close() // only G is counted from here on

	before := proxy.chatsSent()
	id := gus.id()
	reply := gus.call(proto.GetChatsRequest{ChannelID: ch, Limit: 2, RequestID: id})
	sent := proxy.chatsSent() - before
	r, ok := reply.(proto.GetChatsResponse)
	if !ok || !slices.Equal(r.Messages, want) {
		k.Fatalf("%s: channel %d has 2 messages, %d stream messages of channel %d between them\nsent: GetChats(channel %d, limit 2)\nwant: 106 with %s\ngot:  %s (NATS sent the server %d chat messages for it)\n"+
			"likely cause: the start of the newest 2 is looked for one sequence at a time (a request per message of the other channels); halve the range of sequences%s",
			gus.who, ch, longChannel, other, ch, chats(want), showHistory(reply), sent, gus.context())
	}
	if limit := 4*2 + 64; sent > limit {
		k.Fatalf("%s: channel %d has 2 messages, %d stream messages of channel %d between them\nsent: GetChats(channel %d, limit 2)\nwant: the answer for at most %d chat messages from NATS\ngot:  the right answer, for %d\n"+
			"likely cause: the start of the newest 2 is looked for one sequence at a time; a history costs what it returns — halve the range of sequences (each count is one direct get)%s",
			gus.who, ch, longChannel, other, ch, limit, sent, gus.context())
	}
}
