package chatcoretest

import (
	"fmt"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// checkLoginRoom: registrations must not take the whole hash queue from
// logins. With slow hashes and HashWait 4 s, 8 registrations at once teach
// the queue how long a hash takes; then loginRoomFlood registrations arrive
// at once (far more than the cores hash in 4 s), and once one of them is
// answered, loginRoomLogins logins of those users, each with a typo (a
// login's hash all the same, and no memo to skip it; an unknown name's
// dummy hash is made once, outside the queue, and under -race on a busy
// machine took longer than the check waits) follow. Each login must be
// answered 100 "Wrong username or password", none
// "Server busy.": 10 addresses sending registrations filled chapter 07's
// queue, and 30 honest logins were told Server busy. for 6 s (attacker5's
// F9). The server may keep the room another way (a share of the queue for
// registrations, logins first), but a login must find room.
func checkLoginRoom(k *testkit.T, impl Impl) {
	k.Helper()
	const wait = 4 * time.Second
	e := start(k, impl, Config{SlowHash: true, HashWait: wait, AddressFailures: 10000, AddressRegistrations: 10000,
		MaxLoginFailures: 10000})
	regs := func(n int, prefix string) []*client {
		cs := make([]*client, n)
		for i := range cs {
			cs[i] = e.dial(fmt.Sprintf("%s %d of %d", prefix, i+1, n))
		}
		for i, c := range cs {
			c.send(proto.CreateUserRequest{RequestID: 1, Name: fmt.Sprintf("%s-%d", prefix, i), Password: "pw-room"})
		}
		return cs
	}
	for _, c := range regs(8, "warm") {
		c.next("a registration that teaches the queue a hash's time")
	}
	flood := regs(loginRoomFlood, "flood")
	flood[0].next(fmt.Sprintf("the first answer of %d registrations at once", loginRoomFlood))
	logins := make([]*client, loginRoomLogins)
	for i := range logins {
		logins[i] = e.dial(fmt.Sprintf("login %d of %d", i+1, loginRoomLogins))
		logins[i].send(proto.AuthenticateRequest{RequestID: 1, Name: fmt.Sprintf("warm-%d", i), Password: "a typo"})
	}
	for _, c := range logins {
		m := c.next("a login sent while registrations filled the hash queue")
		if !same(m, proto.ErrorResponse{RequestID: 1, Value: proto.MsgWrongPassword}) {
			k.Fatalf("%d registrations at once (slow hashes, HashWait %v), then %d logins with a wrong password\n"+
				"  sent: 115 from %s\n  want: 100 %q (the hash ran)\n   got: %s\n"+
				"Registrations filled the hash queue and left no room for logins: let registrations in flight hold "+
				"only a share of HashWait (Server busy. past it, before they queue), so that a login always finds "+
				"room (loginroom.go: registrationShare)%s", loginRoomFlood, wait, loginRoomLogins, c.who,
				proto.MsgWrongPassword, show(m), c.context())
		}
	}
	for _, c := range flood[1:] {
		c.next("the answer to a registration of the flood")
	}
}

// loginRoomFlood is checkLoginRoom's flood: with slow hashes (tens of
// milliseconds at the least), several times what 2 cores hash in HashWait.
// loginRoomLogins is how many logins then follow.
const (
	loginRoomFlood  = 240
	loginRoomLogins = 4
)
