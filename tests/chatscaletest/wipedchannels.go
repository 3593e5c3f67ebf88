package chatscaletest

import (
	"fmt"
	"slices"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// channelsBeforeWipe makes three channels on server a, for
// oldChannelsForgotten to look for once the store is wiped.
func channelsBeforeWipe(k *testkit.T, a *chatServer) []proto.Channel {
	k.Helper()
	c := a.dial("olga")
	registerEventually(k, c, "olga")
	return []proto.Channel{c.createChannel("old-0"), c.createChannel("old-1"), c.createChannel("old-2")}
}

// oldChannelsForgotten checks that a server's channels do not outlive the
// store that made them (attacker5's F7): after NATS restarted on an empty
// store, one user on each server (users, in the order of the servers)
// makes a channel. Each server's list must come to hold both, and then hold
// no channel of the old store, the same list on every server; and an old
// id the new store has not handed out must be refused Channel not found.
// (Before, the two servers gave ids 1 and 2 different names, and a message
// written to an old id was heard in the new channel that got it.)
func oldChannelsForgotten(k *testkit.T, users []*client, old []proto.Channel, why string) {
	k.Helper()
	var made []string
	for i, c := range users {
		made = append(made, c.createChannel(fmt.Sprintf("new-%d", i)).Name)
	}
	var lists [][]proto.Channel
	for _, c := range users {
		var list []proto.Channel
		deadline := time.Now().Add(testkit.IOTimeout)
		for {
			id := c.id()
			m := c.call(proto.GetChannelsRequest{RequestID: id})
			r, ok := m.(proto.GetChannelsResponse)
			if !ok {
				k.Fatalf("%s: %s: GetChannels\nwant: 120\ngot:  %s%s", c.who, why, show(m), c.context())
			}
			list = r.Channels
			if all(list, made) || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond) // a retry's pause: the other server's channel comes by its watcher
		}
		for _, ch := range list {
			if slices.ContainsFunc(old, func(o proto.Channel) bool { return o.Name == ch.Name }) || !slices.Contains(made, ch.Name) {
				k.Fatalf("%s: %s; then the channels %v were made, one on each server\nwant: GetChannels lists those, "+
					"and no channel of the wiped store (%v)\ngot:  %v%s\n(likely cause: the channel cache outlived "+
					"the store; empty it where the server forgets what it keeps by user id, and read the bucket "+
					"again)", c.who, why, made, old, list, c.context())
			}
		}
		if !all(list, made) {
			k.Fatalf("%s: %s; then the channels %v were made, one on each server\nwant: both in GetChannels within "+
				"%v\ngot:  %v%s", c.who, why, made, testkit.IOTimeout, list, c.context())
		}
		lists = append(lists, list)
	}
	unused := old[len(old)-1].ID
	c := users[0]
	id := c.id()
	c.callExpect(fmt.Sprintf("%s: joining channel %d (%s before; the new store has handed out %d channels)", why,
		unused, old[len(old)-1].Name, len(made)), proto.JoinChannelRequest{ChannelID: unused, RequestID: id},
		proto.ErrorResponse{RequestID: id, Value: proto.MsgChannelNotFound})
}

// all reports whether list holds a channel of each name.
func all(list []proto.Channel, names []string) bool {
	for _, n := range names {
		if !slices.ContainsFunc(list, func(ch proto.Channel) bool { return ch.Name == n }) {
			return false
		}
	}
	return true
}
