package hostile

import (
	"fmt"
	"strings"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// StartShared serves n fresh servers of the chapter that keep their data
// in one place (chapter 08: one NATS), configured with l, for the rest of
// k's check, and returns their addresses. A chapter whose servers cannot
// share their data (07, one SQLite file each) serves one, whatever n is.
type StartShared func(k *testkit.T, l Limits, n int) (addrs []string)

// OneServer is the StartShared of a chapter whose servers share nothing:
// start's one server.
func OneServer(start Start) StartShared {
	return func(k *testkit.T, l Limits, _ int) []string { return []string{start(k, l)} }
}

// ChannelCapRace checks MaxChannels under concurrent creation: many users,
// spread over the servers, each ask for a new channel at the same moment.
// (A cap checked, released, then created let every request in flight
// through: 40 users at once made 236 channels on chapter 07 with a cap of
// 200, and two chapter 08 servers 137 with a cap of 100.)
func ChannelCapRace(k *testkit.T, start StartShared) {
	k.Helper()
	run(k, "channel-cap-race", func(k *testkit.T) { checkChannelCapRace(k, start) })
}

// checkChannelCapRace: users on every server create one new channel each,
// all requests sent before any answer is read. The channels made (108
// answers: every name is new) may pass MaxChannels by at most one per
// server but the first — what chapter 08's servers, which learn of each
// other's channels late, promise (its README, "Limits") — and 07's one
// server not at all; every other request is refused 100 "Too many
// channels.", and at least MaxChannels are made.
func checkChannelCapRace(k *testkit.T, start StartShared) {
	const (
		capacity = 6
		users    = 30
		servers  = 2
	)
	addrs := start(k, Limits{MaxChannels: capacity}, servers)
	slack := len(addrs) - 1
	cs := make([]*client, users)
	for i := range cs {
		name := fmt.Sprintf("race-%d", i)
		cs[i] = dial(k, addrs[i%len(addrs)], fmt.Sprintf("%s (server %d of %d)", name, i%len(addrs)+1, len(addrs)))
		cs[i].login(name)
	}
	ids := make([]uint64, users)
	for i, c := range cs {
		ids[i] = c.id()
		if !c.trySend(proto.CreateChannelRequest{RequestID: ids[i], Name: fmt.Sprintf("race-ch-%d", i)}) {
			k.Fatalf("%s: sending 107 failed: the server closed the connection%s", c.who, c.context())
		}
	}
	var made, refused []string
	for i, c := range cs {
		switch m := c.answer(ids[i], "creating a channel, with "+fmt.Sprint(users)+" users at once").(type) {
		case proto.CreateChannelResponse:
			made = append(made, fmt.Sprintf("%s (id %d, by %s)", m.Channel.Name, m.Channel.ID, c.who))
		case proto.ErrorResponse:
			if m.Value != proto.MsgTooManyChannels {
				k.Fatalf("%s: creating a channel, %d users at once, MaxChannels %d\n  want: 108, or 100 %q\n   got: %s%s",
					c.who, users, capacity, proto.MsgTooManyChannels, show(m), c.context())
			}
			refused = append(refused, c.who)
		default:
			k.Fatalf("%s: creating a channel, %d users at once, MaxChannels %d\n  want: 108, or 100 %q\n   got: %s%s",
				c.who, users, capacity, proto.MsgTooManyChannels, show(m), c.context())
		}
	}
	if n := len(made); n > capacity+slack {
		if n > 8 {
			made = append(made[:8:8], fmt.Sprintf("… and %d more", n-8))
		}
		k.Fatalf("%d users on %d server(s) each created a new channel at the same moment, MaxChannels %d\n"+
			"  want: at most %d channels made (%d refused 100 %q)\n   got: %d made:\n    %s\n"+
			"  likely cause: the cap is checked, the lock released, then the channel created, so every request "+
			"in flight passes the check (count a channel being made in the same hold of the lock as the check); "+
			"or, with servers that share a store, each counts only the channels it has heard of (count the "+
			"store's)",
			users, len(addrs), capacity, capacity+slack, users-capacity-slack, proto.MsgTooManyChannels,
			n, strings.Join(made, "\n    "))
	}
	if len(made) < capacity {
		k.Fatalf("%d users on %d server(s) each created a new channel at the same moment, MaxChannels %d\n"+
			"  want: at least %d channels made\n   got: %d made, %d refused 100 %q (%s)\n"+
			"  likely cause: a channel being made is counted twice, or its count is not given back",
			users, len(addrs), capacity, capacity, len(made), len(refused), proto.MsgTooManyChannels,
			strings.Join(refused, ", "))
	}
}
