package hostile

import (
	"fmt"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// checkChannelShares: with MaxChannels 8, MaxChannelsPerUser 2 and
// MaxChannelsPerAddress 2, three addresses each register four users, and
// every user makes channels until it is refused. Honest users from two more
// addresses must then each still make a channel: a user is free to
// register, so a cap per user is no cap per client, and a cap on the total
// alone is one client can spend for everyone (65 users of one address made
// all 4,096 channels of chapter 07 in 5 s, and no honest user could make one
// again, ever: channels are never deleted). The server may share the
// channels out another way, but it must: an address's share, and near the
// cap, places kept for addresses that made few (as for connections).
func checkChannelShares(k *testkit.T, start Start) {
	const total, perUser, perAddr, attackers, users, honest = 8, 2, 2, 3, 4, 2
	addr := start(k, Limits{MaxChannels: total, MaxChannelsPerUser: perUser, MaxChannelsPerAddress: perAddr})
	var ips []string
	for i := range attackers + honest {
		ips = append(ips, fmt.Sprintf("127.0.0.%d", i+2))
	}
	needAddresses(k, addr, ips...)
	made := map[string]int{}
	for a, ip := range ips[:attackers] {
		for u := range users {
			name := fmt.Sprintf("sh-%d-%d", a, u)
			c, _ := dialFrom(k, addr, ip, name)
			c.login(name)
			for n := range perUser {
				id := c.id()
				m := c.call(proto.CreateChannelRequest{RequestID: id, Name: fmt.Sprintf("%s-c%d", name, n)},
					"a channel of one of many users of one address")
				if _, ok := m.(proto.CreateChannelResponse); ok {
					made[ip]++
					continue
				}
				if r, ok := m.(proto.ErrorResponse); !ok || r.Value != proto.MsgTooManyChannels {
					k.Fatalf("%s: creating a channel: want 108, or 100 %q, got %s%s", c.who,
						proto.MsgTooManyChannels, show(m), c.context())
				}
				break
			}
			c.nc.Close()
		}
	}
	for _, ip := range ips[attackers:] {
		name := "honest-" + ip
		c, _ := dialFrom(k, addr, ip, name)
		c.login(name)
		id := c.id()
		m := c.call(proto.CreateChannelRequest{RequestID: id, Name: name + "-room"}, "an honest user's first channel")
		if _, ok := m.(proto.CreateChannelResponse); !ok {
			k.Fatalf("%d addresses each registered %d users, and each user made channels until refused "+
				"(MaxChannels %d, MaxChannelsPerUser %d, MaxChannelsPerAddress %d): made, by address: %v.\n"+
				"Then %s asked for its first channel\n  want: 108 with the channel\n   got: %s\n"+
				"One client must not spend the channel cap for everyone by registering users: count what each "+
				"address makes (MaxChannelsPerAddress), and near MaxChannels keep the last places for addresses "+
				"that made few (see guard.Shares)%s", attackers, users, total, perUser, perAddr, made, c.who,
				show(m), c.context())
		}
	}
}
