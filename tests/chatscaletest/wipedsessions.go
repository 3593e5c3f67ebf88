package chatscaletest

import (
	"errors"
	"net"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// sessionsWiped checks that every server, not only the first to make the
// users bucket again, ends its sessions when the bucket it knew is gone:
// the new bucket hands the old sessions' user ids to new users, and a
// session kept would speak under a new user's name (attacker4's F3: with
// two servers on one NATS restarted on an empty store, one server went on
// with its sessions, 2 runs in 2). Two cases, each with alice on A and bob
// on B: NATS restarted on an empty store (both servers reconnect), then
// the users bucket deleted and made again by the suite while both servers
// stay connected (no reconnect: a server must compare the bucket's
// identity when it refreshes its sessions too). Each session's client must
// be told an error (never silence) and disconnected; a user registered
// afterwards then logs in and stays logged in.
func sessionsWiped(k *testkit.T, impl Impl) {
	r := newSessionRig(k, impl)
	wait := r.cfg.SessionTTL + testkit.IOTimeout
	for _, round := range []struct{ why, suffix string }{
		{"NATS restarted on an empty store under servers A and B", ""},
		{"the suite deleted the users bucket and made it again, both servers connected to NATS all along", "2"},
	} {
		alice := r.a.dial("alice" + round.suffix)
		bob := r.b.dial("bob" + round.suffix)
		registerEventually(k, alice, "alice"+round.suffix)
		registerEventually(k, bob, "bob"+round.suffix)
		var old []proto.Channel
		if round.suffix == "" {
			old = channelsBeforeWipe(k, r.a) // wipedchannels.go
			r.n.wipe()
		} else {
			r.obs.remakeStream("KV_" + usersBucket)
		}
		sessionEnded(k, alice, round.why, wait)
		sessionEnded(k, bob, round.why, wait)
		oldPasswordRefused(k, r.a, r.b, alice, round.why, round.suffix)

		// The servers work on: a new user registers and logs in on each,
		// and is not logged out by the refreshes that follow (a server
		// that kept the old identity would end every session again).
		var carols []*client
		for _, s := range []*chatServer{r.a, r.b} {
			c := s.dial("carol" + round.suffix + s.name)
			registerEventually(k, c, "carol"+round.suffix+s.name)
			carols = append(carols, c)
		}
		for range 5 { // a refresh every TTL/3: one, at least, passes
			<-r.tick.C
		}
		for _, c := range carols {
			id := c.id()
			c.callExpect(round.why+": a user registered after it stays logged in while the server refreshes its sessions",
				proto.GetUserRequest{Name: c.user.Name, RequestID: id}, proto.GetUserResponse{RequestID: id, User: c.user})
		}
		if old != nil {
			oldChannelsForgotten(k, carols, old, round.why)
		}
	}
}

// registerEventually registers name and logs in, retrying within
// testkit.IOTimeout while the server answers Storage failed. (it has not
// yet made its buckets again).
func registerEventually(k *testkit.T, c *client, name string) {
	k.Helper()
	storageEventually(k, c, "registering "+name,
		func(id uint64) proto.Requester {
			return proto.CreateUserRequest{Name: name, Password: password(name), RequestID: id}
		},
		func(m proto.Message) bool { r, ok := m.(proto.CreateUserResponse); return ok && r.User.Name == name })
	loginEventually(k, c, name, "logging in as "+name+", just registered")
}

// sessionEnded reads c until its server closes the connection, within
// wait, and fails unless an error (Storage failed., or any 101/100) came
// first: a session whose user is gone must end, and its client be told.
func sessionEnded(k *testkit.T, c *client, why string, wait time.Duration) {
	k.Helper()
	deadline := time.Now().Add(wait)
	var got []proto.Message
	told := false
	for {
		m, err := c.tryNext(time.Until(deadline))
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				k.Fatalf("%s: %s; %s was logged in before, with user id %d\n"+
					"want: the server tells this client an error and ends the session (closes the connection) within %v: every user of the old bucket is gone, and the new bucket hands id %d to the next user who registers\n"+
					"got:  the connection still open after %s%s\n"+
					"(likely cause: only the server that made the bucket again ended its sessions; compare the bucket's identity, e.g. its creation time, on every reconnect and every refresh)",
					c.who, why, c.user.Name, c.user.ID, wait, c.user.ID, showAll(got), c.context())
			}
			break // closed
		}
		got = append(got, m)
		switch m.(type) {
		case proto.Error, proto.ErrorResponse:
			told = true
		}
	}
	if !told {
		k.Fatalf("%s: %s\nwant: an error (e.g. %q) before the server closes the connection of a session it ends\ngot:  %s, then the close: silence%s",
			c.who, why, proto.MsgStorageFailed, showAll(got), c.context())
	}
}

// remakeStream deletes the stream name and makes it again with the same
// configuration: the same bucket, but a new one, empty, made at a new time.
func (o *observer) remakeStream(name string) {
	o.k.Helper()
	ctx, cancel := o.ctx()
	defer cancel()
	st, err := o.js.Stream(ctx, name)
	if err != nil {
		o.k.Fatalf("the suite reads the stream %s: %v", name, err)
	}
	cfg := st.CachedInfo().Config
	if err := o.js.DeleteStream(ctx, name); err != nil {
		o.k.Fatalf("the suite deletes the stream %s: %v", name, err)
	}
	// A server that found it missing meanwhile may have made it first.
	if _, err := o.js.CreateStream(ctx, cfg); err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		o.k.Fatalf("the suite makes the stream %s again: %v", name, err)
	}
}
