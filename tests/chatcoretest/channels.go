package chatcoretest

import (
	"testing"

	"serverlab/tests/chatcoretest/hostile"
	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// Channels checks exercise 7.3: creating, listing and joining channels, and
// who hears of it. 129 goes to every open connection; a connection is in one
// channel at a time; a join sends 127 to the channel it leaves (the leaver
// included), then 128 to the channel it enters (the joiner included), then
// the answer 118. A name that exists gives the existing channel and no
// event. Channels survive a restart.
func Channels(t *testing.T, impl Impl) {
	k := testkit.New(t, "7.3")
	e := start(k, impl, Config{})

	check(k, e, "need-a-session", func(k *testkit.T, e *env) {
		c := e.dial("client")
		for _, r := range []proto.Requester{
			proto.CreateChannelRequest{RequestID: 1, Name: "x"},
			proto.GetChannelsRequest{RequestID: 2},
			proto.GetChannelRequest{RequestID: 3, ChannelID: 1},
			proto.JoinChannelRequest{RequestID: 4, ChannelID: 1},
		} {
			c.callExpect("without a session", r, proto.ErrorResponse{RequestID: r.Request(), Value: proto.MsgNotAuthorized})
		}
	})

	check(k, e, "create-and-list", func(k *testkit.T, e *env) {
		watcher := e.dial("an unauthenticated watcher")
		a := e.login("ann")
		watcher.settle()
		a.settle()
		id := a.id()
		a.send(proto.CreateChannelRequest{RequestID: id, Name: "general"})
		r, ok := a.next("creating a channel").(proto.CreateChannelResponse)
		if !ok || r.RequestID != id || r.Channel.Name != "general" || r.Channel.ID == 0 {
			k.Fatalf("creating channel general: want 108 {channel:{id, name:\"general\"}, request_id:%d} first, got %s%s",
				id, show(r), a.context())
		}
		general := r.Channel
		ev := proto.ChannelCreateEvent{Channel: general, UserID: a.user.ID}
		a.expect("after the answer, the creator hears of the new channel", ev)
		watcher.expect("every open connection hears of a new channel", ev)

		a.callExpect("a name that exists gives the existing channel", proto.CreateChannelRequest{RequestID: 50, Name: "general"},
			proto.CreateChannelResponse{RequestID: 50, Channel: general})
		watcher.expectNothing("a channel that existed already is not announced again")
		random := a.createChannel("random")
		if random.ID <= general.ID {
			k.Fatalf("channel ids must grow: general got %d, random (created later) %d", general.ID, random.ID)
		}
		m := a.call(proto.GetChannelsRequest{RequestID: 51})
		list, ok := m.(proto.GetChannelsResponse)
		if !ok || len(list.Channels) < 2 {
			k.Fatalf("GetChannels: want 120 with at least general and random, got %s%s", show(m), a.context())
		}
		for i := 1; i < len(list.Channels); i++ {
			if list.Channels[i-1].ID >= list.Channels[i].ID {
				k.Fatalf("GetChannels must list channels in ascending id order, got %v", list.Channels)
			}
		}
		a.callExpect("GetChannel", proto.GetChannelRequest{RequestID: 52, ChannelID: random.ID},
			proto.GetChannelResponse{RequestID: 52, Channel: random})
		a.callExpect("GetChannel of an unknown id", proto.GetChannelRequest{RequestID: 53, ChannelID: 99999},
			proto.ErrorResponse{RequestID: 53, Value: proto.MsgChannelNotFound})
	})

	check(k, e, "join-and-leave-events", func(k *testkit.T, e *env) {
		a := e.login("amy")
		b := e.login("ben")
		c1 := a.createChannel("one")
		c2 := a.createChannel("two")
		a.settle()
		b.settle()

		a.callExpect("joining an unknown channel", proto.JoinChannelRequest{RequestID: 100, ChannelID: 99999},
			proto.ErrorResponse{RequestID: 100, Value: proto.MsgChannelNotFound})
		a.send(proto.JoinChannelRequest{RequestID: 101, ChannelID: c1.ID})
		a.expect("amy joins one: the join event (the joiner included), then the answer",
			proto.ChannelJoinEvent{ChannelID: c1.ID, UserID: a.user.ID}, proto.JoinChannelResponse{RequestID: 101, ChannelID: c1.ID})
		b.expectNothing("ben is in no channel: he hears nothing of joins")

		b.send(proto.JoinChannelRequest{RequestID: 102, ChannelID: c1.ID})
		b.expect("ben joins one", proto.ChannelJoinEvent{ChannelID: c1.ID, UserID: b.user.ID},
			proto.JoinChannelResponse{RequestID: 102, ChannelID: c1.ID})
		a.expect("amy, in one, hears that ben joined it", proto.ChannelJoinEvent{ChannelID: c1.ID, UserID: b.user.ID})

		a.send(proto.JoinChannelRequest{RequestID: 103, ChannelID: c2.ID})
		a.expect("amy moves to two: the leave event to one (her included), the join event to two, then the answer",
			proto.ChannelLeaveEvent{ChannelID: c1.ID, UserID: a.user.ID},
			proto.ChannelJoinEvent{ChannelID: c2.ID, UserID: a.user.ID},
			proto.JoinChannelResponse{RequestID: 103, ChannelID: c2.ID})
		b.expect("ben, in one, hears that amy left it", proto.ChannelLeaveEvent{ChannelID: c1.ID, UserID: a.user.ID})
		b.expectNothing("ben is not in two: he does not hear of joins there")

		a.send(proto.JoinChannelRequest{RequestID: 104, ChannelID: c2.ID})
		a.expect("joining the channel one is in: leave, join, answer",
			proto.ChannelLeaveEvent{ChannelID: c2.ID, UserID: a.user.ID},
			proto.ChannelJoinEvent{ChannelID: c2.ID, UserID: a.user.ID},
			proto.JoinChannelResponse{RequestID: 104, ChannelID: c2.ID})

		b.send(proto.LogoutRequest{RequestID: 105})
		b.expect("a logout", proto.UserLogoutEvent{UserID: b.user.ID}, proto.LogoutResponse{RequestID: 105})
		a.waitFor("amy hears of ben's logout", proto.UserLogoutEvent{UserID: b.user.ID})
		a.expectNothing("a logout sends no leave event (as in the original)")
	})

	check(k, e, "listing-order", checkChannelOrder)
	check(k, e, "leaver-hears-nothing", checkLeaverHearsNothing)
	check(k, e, "concurrent-create-and-list", func(k *testkit.T, _ *env) { checkConcurrentCreateAndList(k, impl) })

	check(k, e, "restart", func(k *testkit.T, _ *env) {
		e := start(k, impl, Config{})
		a := e.login("abe")
		ch := a.createChannel("lasting")
		a.nc.Close()
		e.restart()
		a = e.dial("abe, after a restart")
		a.authenticate("abe")
		a.callExpect("a channel survives a restart", proto.GetChannelRequest{RequestID: 1, ChannelID: ch.ID},
			proto.GetChannelResponse{RequestID: 1, Channel: ch})
		a.callExpect("and its name is still taken", proto.CreateChannelRequest{RequestID: 2, Name: "lasting"},
			proto.CreateChannelResponse{RequestID: 2, Channel: ch})
	})

	channelLimits(k, impl, e)
	hostile.Channels(k, hostileStart(impl))
	hostile.ChannelCapRace(k, hostile.OneServer(hostileStart(impl)))
	check(k, e, "storage-failure", func(k *testkit.T, _ *env) { checkStorageFailure(k, impl, "CreateChannel") })
}
