package hostile

import (
	"fmt"
	"strings"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// Accounts checks the limits on users: names (length and what they may
// hold), the ids of one GetUsers, a reply too large for a frame, and the
// login throttle, which no cache of recent logins may bypass.
func Accounts(k *testkit.T, start Start) {
	k.Helper()
	run(k, "user-names", func(k *testkit.T) { checkUserNames(k, start) })
	run(k, "throttle-before-any-cache", func(k *testkit.T) { checkThrottleFirst(k, start) })
	run(k, "presence-storm-of-logins", func(k *testkit.T) { checkPresenceStorm(k, start, false) })
	hashQueue(k, start) // hashfair.go
}

// Name limits every chatcore server keeps (docs/chatcore.md, "Limits").
const (
	maxUserName    = 32
	maxChannelName = 64
	maxUserIDs     = 1000
)

// hurtful are names no server may store: each hurts whoever displays it.
var hurtful = []struct{ name, why string }{
	{"", "the empty name"},
	{"esc\x1b[2Jclear", "an ESC sequence (the terminal obeys it)"},
	{"rtl\u202egnp.exe", "a right-to-left override"},
	{"zero\u200bwidth", "a zero-width space"},
	{"nul\x00byte", "a NUL"},
	{" ", "only a space (it cannot be told from the empty name)"},
	{"a bna", "a space inside (the client splits commands on spaces)"},
	{" lead", "a leading space"},
	{"trail ", "a trailing space"},
	{"tab\tname", "a tab"},
	{"new\nline", "a newline"},
	{"del\x7fchar", "a DEL"},
	{"no\u00a0break", "a no-break space"},
	{"ideo\u3000space", "an ideographic space"},
	{"line\u2028sep", "a line separator"},
	{"iso\u2066late", "a bidi isolate"},
	{"\ufeffbom", "a byte-order mark"},
}

// checkNames tries names on create: the longest allowed is accepted, one
// byte more and every hurtful name refused with Invalid name.
func checkNames(k *testkit.T, c *client, what string, limit int, create func(id uint64, name string) proto.Requester) {
	k.Helper()
	try := func(name, why string, ok bool) {
		k.Helper()
		id := c.id()
		m := c.call(create(id, name), what+" name: "+why)
		refused := m == proto.Message(proto.ErrorResponse{RequestID: id, Value: proto.MsgInvalidName})
		if ok && refused || !ok && !refused {
			k.Fatalf("%s: a %s name with %s (%d bytes; the limit is %d)\n  want: %s\n   got: %s%s", c.who, what,
				why, len(name), limit, map[bool]string{true: "accepted", false: "100 " + proto.MsgInvalidName}[ok],
				show(m), c.context())
		}
	}
	try(strings.Repeat("a", limit), "exactly the limit", true)
	try(strings.Repeat("b", limit+1), "one byte more than the limit", false)
	try(strings.Repeat("c", 256<<10), "256 KiB", false)
	for _, h := range hurtful {
		try(h.name, h.why, false)
	}
}

// checkUserNames: user names are bounded and printable; GetUsers takes at
// most 1000 ids (each costs the server a user in its reply); a reply that
// would not fit in a frame is answered Reply too large., never with
// silence.
func checkUserNames(k *testkit.T, start Start) {
	addr := start(k, Limits{})
	c := dial(k, addr, "a registrar")
	checkNames(k, c, "user", maxUserName, func(id uint64, name string) proto.Requester {
		return proto.CreateUserRequest{RequestID: id, Name: name, Password: "pw"}
	})
	c.login("ids-asker")
	ids := make([]uint32, maxUserIDs+1)
	for i := range ids {
		ids[i] = c.user.ID
	}
	id := c.id()
	c.expect(fmt.Sprintf("GetUsers with %d ids, one more than the limit of %d", len(ids), maxUserIDs),
		proto.GetUsersRequest{RequestID: id, UserIDs: ids}, proto.ErrorResponse{RequestID: id, Value: proto.MsgTooManyIDs})
	empty, _ := proto.Encode(proto.GetUserRequest{RequestID: 777})
	name := strings.Repeat("x", proto.MaxFrame-(len(empty)-proto.HeaderSize))
	c.expect("GetUser of a name so long that \"User with name … not found\" cannot fit in a frame",
		proto.GetUserRequest{RequestID: 777, Name: name}, proto.ErrorResponse{RequestID: 777, Value: proto.MsgReplyTooLarge})
	id = c.id()
	c.expect("the connection goes on after a reply too large", proto.GetUserRequest{RequestID: id, Name: "ids-asker"},
		proto.GetUserResponse{RequestID: id, User: c.user})
}

// checkThrottleFirst: an address past its failed logins is refused before
// anything looks at the password — a cache of recent logins included. The
// victim logs in (so that any cache holds its password) and out; 3 wrong
// guesses come from 127.0.0.2 (AddressFailures 3), each on a connection of
// its own; then the RIGHT password, from 127.0.0.2 on a fresh connection,
// must be refused: with the cache checked first, one throttled connection
// tested ~20,000 guesses a second against everyone who had logged in
// within 10 minutes, and the right one was accepted. The victim, from its
// own address, still logs in.
func checkThrottleFirst(k *testkit.T, start Start) {
	const failures = 3
	addr := start(k, Limits{AddressFailures: failures, FailureWindow: time.Hour})
	needAddresses(k, addr, "127.0.0.2")
	victim := dial(k, addr, "the victim")
	victim.login("throttle-victim")
	id := victim.id()
	victim.expect("logging out", proto.LogoutRequest{RequestID: id}, proto.LogoutResponse{RequestID: id})
	for i := range failures {
		g, _ := dialFrom(k, addr, "127.0.0.2", fmt.Sprintf("guesser %d", i+1))
		id := g.id()
		g.expect(fmt.Sprintf("wrong guess %d of %d from one address (AddressFailures %d)", i+1, failures, failures),
			proto.AuthenticateRequest{RequestID: id, Name: "throttle-victim", Password: fmt.Sprintf("guess-%d", i)},
			proto.ErrorResponse{RequestID: id, Value: proto.MsgWrongPassword})
	}
	g, _ := dialFrom(k, addr, "127.0.0.2", "the guesser, past its address's limit, with the right password")
	id = g.id()
	got := g.call(proto.AuthenticateRequest{RequestID: id, Name: "throttle-victim", Password: password("throttle-victim")},
		"the right password from a throttled address")
	if want := (proto.ErrorResponse{RequestID: id, Value: proto.MsgTooManyFailures}); got != proto.Message(want) {
		k.Fatalf("%s: after %d failed logins from 127.0.0.2 (AddressFailures %d), a login from there with the "+
			"victim's right password (the victim logged in a moment ago)\n  want: %s — the throttle comes first\n"+
			"   got: %s\nA cache of recent logins that is asked before the throttle lets a throttled address test "+
			"passwords as fast as it can send them%s", g.who, failures, failures, show(want), show(got), g.context())
	}
	id = victim.id()
	victim.expect("the victim logs in from its own address", proto.AuthenticateRequest{RequestID: id,
		Name: "throttle-victim", Password: password("throttle-victim")}, proto.AuthenticateResponse{RequestID: id, User: victim.user})
}
