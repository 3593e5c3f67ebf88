package chatscaletest

import (
	"fmt"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// reloginAfterLogout: a client told "logged out" (124) may log in again at
// once, whatever the session keeper is doing. Users log out and in again
// in a loop, all at the same moment, with a short SessionTTL so that the
// keeper refreshes their keys all the time. A refresh that wrote a key a
// logout had just released (made it again, or moved it past the revision
// the logout deletes) left the key there for the moment the refresh took
// to notice, and the user's next login was refused "already logged in"
// (a fresh probe: 26 in 35,000 re-logins with a TTL of 3 s). NATS, for
// its part, may refuse a Create as "existing" while it expires the key's
// older messages, which a short TTL makes happen all the time.
func reloginAfterLogout(k *testkit.T, impl Impl) {
	const (
		users  = 40
		rounds = 60 // before the fix, 2 to 24 went by before a refusal (-race)
	)
	cfg := baseConfig(k, startNATS(k).url())
	// A refresh every 33 ms (more under load): the keeper is always
	// writing some user's key. (NATS takes no TTL under 100 ms.)
	cfg.SessionTTL = scaled(100 * time.Millisecond)
	a := serve(k, impl, "A", cfg)
	cs := make([]*client, users)
	for i := range cs {
		cs[i] = a.dial(fmt.Sprintf("user %d", i))
		cs[i].newUser(fmt.Sprintf("relogin-%d", i))
	}
	deadline := time.Now().Add(testkit.IOTimeout)
	for r := 1; r <= rounds && time.Now().Before(deadline); r++ {
		for _, c := range cs {
			c.send(proto.LogoutRequest{RequestID: c.id()})
		}
		for _, c := range cs {
			if m := c.answer(); m != (proto.LogoutResponse{RequestID: c.nextID}) {
				k.Fatalf("%s: logging out (round %d)\nwant: 124\ngot:  %s%s%s", c.who, r, show(m), notImplemented(m), c.context())
			}
		}
		for _, c := range cs {
			c.send(proto.AuthenticateRequest{Name: c.user.Name, Password: password(c.user.Name), RequestID: c.id()})
		}
		for _, c := range cs {
			if m := c.answer(); m != (proto.AuthenticateResponse{RequestID: c.nextID, User: c.user}) {
				k.Fatalf("%s: logging in again as soon as 124 came (round %d of %d; %d users at once, SessionTTL %v)\n"+
					"want: 116 with the user\ngot:  %s%s\n"+
					"(likely cause: a refresh of the session keys wrote this user's key while the logout released it — "+
					"made it again, or moved it past the lease the logout deletes — and it was still there when 124 "+
					"was sent, so the logout must not answer before a refresh under way is done with the key; or NATS "+
					"refused the claim while expiring the key's older messages, so read the key before answering "+
					"\"already logged in\")%s",
					c.who, r, rounds, users, cfg.SessionTTL, show(m), notImplemented(m), c.context())
			}
		}
	}
}

// answer reads until the answer to the request last sent, dropping the
// events (a loop of logins and logouts makes thousands, which a backlog
// would keep); it fails the check after testkit.IOTimeout.
func (c *client) answer() proto.Message {
	c.k.Helper()
	deadline := time.Now().Add(testkit.IOTimeout)
	for {
		m, err := c.tryNext(time.Until(deadline))
		if err != nil {
			c.k.Fatalf("%s: no answer to request %d within %v (%v)%s", c.who, c.nextID, testkit.IOTimeout, err, c.context())
		}
		if r, ok := m.(proto.Requester); ok && r.Request() == c.nextID {
			return m
		}
	}
}
