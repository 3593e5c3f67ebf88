package hostile

import (
	"fmt"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// checkPresenceStorm: the presence events (126, 125, 128, 127) a connection
// is sent are bounded by its budget, whatever the storm: at most
// PresenceBurst + PresenceRate × the storm's time. A stormer makes 200
// presence events about itself as fast as it can — 100 rounds of login and
// logout (joins false), or of joining the observer's channel and another
// one (joins true) — while an observer in that channel reads nothing. The
// stormer must get every event about itself (its client acts on them:
// they are never dropped). Then the stormer creates a channel, whose 129
// goes to everyone (only presence is budgeted); the observer reads up to
// it and counts the stormer's presence events before it: at most the
// budget, and at least half the burst (the budget is not "drop all").
// (Unbounded, 20 stormers sent 200 observers of two chapter 08 servers
// 233–352 MB in 15 s, 1.9–2.9 M frames, where chapter 07's budget sent
// 9.5 MB; an honest client's chat echo took 1.3 s against 185 ms.)
func checkPresenceStorm(k *testkit.T, start Start, joins bool) {
	const (
		rounds      = 100
		burst, rate = 10, 2 // small: a server without the budget sends all 200 unless the storm takes 95 s
	)
	addr := start(k, Limits{PresenceBurst: burst, PresenceRate: rate})
	observer := dial(k, addr, "an observer that reads nothing during the storm")
	observer.login("presence-observer")
	var room, hall proto.Channel
	if joins {
		room = observer.createChannel("presence-room")
		hall = observer.createChannel("presence-hall")
		observer.join(room.ID)
	}
	storm := dial(k, addr, "a stormer")
	stormer := storm.register("presence-stormer")
	what := "logins and logouts"
	if joins {
		what = "joins of the observer's channel and of another"
		storm.login2(stormer)
	}
	began := time.Now()
	for range rounds {
		if joins {
			id := storm.id()
			storm.send(proto.JoinChannelRequest{RequestID: id, ChannelID: room.ID})
			storm.awaitAll(what, proto.JoinChannelResponse{RequestID: id, ChannelID: room.ID},
				proto.ChannelJoinEvent{ChannelID: room.ID, UserID: stormer.ID})
			id = storm.id()
			storm.send(proto.JoinChannelRequest{RequestID: id, ChannelID: hall.ID})
			storm.awaitAll(what, proto.JoinChannelResponse{RequestID: id, ChannelID: hall.ID},
				proto.ChannelLeaveEvent{ChannelID: room.ID, UserID: stormer.ID},
				proto.ChannelJoinEvent{ChannelID: hall.ID, UserID: stormer.ID})
			continue
		}
		storm.login2(stormer)
		id := storm.id()
		storm.send(proto.LogoutRequest{RequestID: id})
		storm.awaitAll(what, proto.LogoutResponse{RequestID: id}, proto.UserLogoutEvent{UserID: stormer.ID})
	}
	if !joins {
		storm.login2(stormer)
	}
	made := storm.createChannel("after-the-storm")
	after := proto.ChannelCreateEvent{Channel: made, UserID: stormer.ID}
	got := 0
	deadline := time.Now().Add(testkit.IOTimeout)
	for {
		m, err := observer.read(deadline)
		if err != nil {
			k.Fatalf("after a storm of %d %s, the observer did not get the 129 of a channel made after it within %v "+
				"(%s; it had %d of the stormer's presence events): only presence events may be dropped, never a "+
				"channel's creation%s", 2*rounds, what, testkit.IOTimeout, testkit.Describe(err), got, observer.context())
		}
		if fmt.Sprint(m) == fmt.Sprint(after) {
			break
		}
		switch m := m.(type) {
		case proto.UserLoginEvent:
			got += count(m.UserID == stormer.ID)
		case proto.UserLogoutEvent:
			got += count(m.UserID == stormer.ID)
		case proto.ChannelJoinEvent:
			got += count(m.UserID == stormer.ID)
		case proto.ChannelLeaveEvent:
			got += count(m.UserID == stormer.ID)
		}
	}
	took := time.Since(began)
	most := burst + int(took.Seconds()*rate) + 1
	k.Logf("a storm of %d presence events (%s) in %v: the observer was sent %d (budget %d at once, %d a second: "+
		"at most %d)", 2*rounds+1, what, took.Round(time.Millisecond), got, burst, rate, most)
	if got > most {
		k.Fatalf("a stormer made %d presence events (%s) in %v; an observer that read nothing meanwhile was sent "+
			"%d of them, more than its budget allows (PresenceBurst %d at once, PresenceRate %d a second: at most "+
			"%d). Hand every presence event to each receiver through its budget (guard.Presence), on every server "+
			"that delivers it, or a storm of N clients fans out N² frames", 2*rounds+1, what,
			took.Round(time.Millisecond), got, burst, rate, most)
	}
	if got < burst/2 {
		k.Fatalf("a stormer made %d presence events (%s); an observer was sent only %d: the budget lets the first "+
			"%d through (PresenceBurst), only the events past it are dropped", 2*rounds+1, what, got, burst)
	}
}

// login2 logs this connection in as u (registered already) and waits for
// both the answer and its own 126, which no budget may hold back.
func (c *client) login2(u proto.User) {
	c.k.Helper()
	id := c.id()
	c.send(proto.AuthenticateRequest{RequestID: id, Name: u.Name, Password: password(u.Name)})
	c.awaitAll("logging in as "+u.Name, proto.AuthenticateResponse{RequestID: id, User: u},
		proto.UserLoginEvent{UserID: u.ID})
	c.user = u
}

// awaitAll reads until every one of wants has come, in any order, within
// IOTimeout; anything else is skipped. Events about the client's own
// session are among them: a presence budget never drops those.
func (c *client) awaitAll(what string, wants ...proto.Message) {
	c.k.Helper()
	missing := map[string]proto.Message{}
	for _, w := range wants {
		missing[fmt.Sprint(w)] = w
	}
	deadline := time.Now().Add(testkit.IOTimeout)
	for len(missing) > 0 {
		m, err := c.read(deadline)
		if err != nil {
			var left []string
			for _, w := range missing {
				left = append(left, show(w))
			}
			c.k.Fatalf("%s: during a storm of %s, no %v within %v (%s): the answer is owed, and an event about "+
				"the client's own session is never dropped by a presence budget%s", c.who, what, left,
				testkit.IOTimeout, testkit.Describe(err), c.context())
		}
		if _, ok := m.(proto.Error); ok {
			c.k.Fatalf("%s: during a storm of %s: want %d frames, got %s%s", c.who, what, len(wants), show(m),
				c.context())
		}
		delete(missing, fmt.Sprint(m))
	}
}

func count(b bool) int {
	if b {
		return 1
	}
	return 0
}
