package hostile

import (
	"fmt"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// Channels checks the limits on channels: names, the channels of the
// server and of one user, and that the list is answered at the cap. (15,007
// channels made in 11 s made chapter 08's first list larger than a frame,
// and GetChannels went unanswered for everyone, on every server.)
func Channels(k *testkit.T, start Start) {
	k.Helper()
	run(k, "channel-names-and-caps", func(k *testkit.T) { checkChannelCaps(k, start) })
	run(k, "channel-shares-by-address", func(k *testkit.T) { checkChannelShares(k, start) })
	run(k, "presence-storm-of-joins", func(k *testkit.T) { checkPresenceStorm(k, start, true) })
}

func checkChannelCaps(k *testkit.T, start Start) {
	const total, perUser = 6, 3
	addr := start(k, Limits{MaxChannels: total, MaxChannelsPerUser: perUser})
	a, b, c := dial(k, addr, "cap-a"), dial(k, addr, "cap-b"), dial(k, addr, "cap-c")
	a.login("cap-a")
	b.login("cap-b")
	c.login("cap-c")
	checkNames(k, a, "channel", maxChannelName, func(id uint64, name string) proto.Requester {
		return proto.CreateChannelRequest{RequestID: id, Name: name}
	})
	// checkNames made one channel, the longest name: a has 2 left.
	refused := func(who *client, name, why string) {
		k.Helper()
		id := who.id()
		who.expect(why, proto.CreateChannelRequest{RequestID: id, Name: name},
			proto.ErrorResponse{RequestID: id, Value: proto.MsgTooManyChannels})
	}
	a1 := a.createChannel("a1")
	a.createChannel("a2") // the per-user limit, exactly
	refused(a, "a3", fmt.Sprintf("a user's channel number %d (MaxChannelsPerUser %d)", perUser+1, perUser))
	id := a.id()
	a.expect("a name that exists, asked for by a user at its limit, is the existing channel",
		proto.CreateChannelRequest{RequestID: id, Name: "a1"}, proto.CreateChannelResponse{RequestID: id, Channel: a1})
	b.createChannel("b1")
	b.createChannel("b2")
	c.createChannel("c1") // the server's limit, exactly
	refused(c, "c2", fmt.Sprintf("the server's channel number %d (MaxChannels %d), by a user who made only 1",
		total+1, total))
	id = b.id()
	m := b.call(proto.GetChannelsRequest{RequestID: id}, "GetChannels at the cap")
	if r, ok := m.(proto.GetChannelsResponse); !ok || len(r.Channels) != total {
		k.Fatalf("%s: GetChannels with the server at MaxChannels (%d)\n  want: 120 with %d channels\n   got: %s%s",
			b.who, total, total, show(m), b.context())
	}
}
