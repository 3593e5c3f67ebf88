package chattest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/wire"
)

// userList is the QUERY_USER payload the suite expects: every registered user,
// sorted, with whether it is online.
func userList(registered []string, online ...string) string {
	var b strings.Builder
	for _, name := range registered {
		b.WriteString(wire.UserLine(name, slices.Contains(online, name)))
	}
	return b.String()
}

func queryReply(to, payload string) wire.Frame {
	return wire.Frame{Type: wire.QueryUser, Sender: wire.ServerName, Target: to, Payload: []byte(payload)}
}

// query sends a QUERY_USER from c (logged in as name) and checks the answer.
func query(k *testkit.T, c *testkit.Conn, name, want, why string) {
	k.Helper()
	c.SendFrame(wire.Frame{Type: wire.QueryUser, Sender: "someone-else", Target: "x"})
	expect(k, c, name, queryReply(name, want), why+"; then "+name+" sent QUERY_USER")
}

// UserQuery checks exercise 2.4: the user list, its exact format, and the
// active flags as clients come and go.
func UserQuery(t *testing.T, impl Impl) {
	k := testkit.New(t, "2.4")
	// Registered out of order, and alice twice (the first line wins; she is
	// listed once).
	e := start(k, impl, Config{}, "carol", "alice", "bob", "dave", "alice")
	registered := []string{"alice", "bob", "carol", "dave"}

	alice := e.loginAs("alice")
	query(k, alice, "alice", userList(registered, "alice"),
		"users carol, alice, bob, dave, alice registered in that order; alice logged in")

	bob := e.loginAs("bob")
	query(k, alice, "alice", userList(registered, "alice", "bob"), "bob logged in")
	query(k, bob, "bob", userList(registered, "alice", "bob"), "bob logged in")

	// STATUS_UPDATE is accepted and ignored: nothing comes back, and the next
	// query is answered as usual.
	bob.SendFrame(wire.Frame{Type: wire.StatusUpdate, Sender: "bob", Payload: []byte("away")})
	query(k, bob, "bob", userList(registered, "alice", "bob"), "bob sent a STATUS_UPDATE (ignored, no reply)")

	bob.Close()
	waitForList(k, alice, "alice", userList(registered, "alice"), "bob closed his connection")

	e.register("erin", "aaron")
	registered = []string{"aaron", "alice", "bob", "carol", "dave", "erin"}
	query(k, alice, "alice", userList(registered, "alice"), "erin and aaron registered while the server was running")

	if err := testkit.WriteFile(e.users, nil, 0o600); err != nil {
		k.Fatalf("test bug: %v", err)
	}
	query(k, alice, "alice", noUsers, "the users file was emptied (the list is the users file as it is now)")
	checkQueryRefreshLockFree(k, impl)
	checkQueryHeldLockFree(k, impl) // heldpush.go
}

// waitForList queries until the answer is want: the server learns that a
// client left asynchronously, so the list may lag for a moment.
func waitForList(k *testkit.T, c *testkit.Conn, name, want, why string) {
	k.Helper()
	deadline := time.Now().Add(testkit.IOTimeout)
	var got wire.Frame
	for time.Now().Before(deadline) {
		c.SendFrame(wire.Frame{Type: wire.QueryUser, Sender: name})
		var err error
		got, err = c.TryReadFrame()
		if err != nil {
			k.Fatalf("%s; then %s sent QUERY_USER: want %q, got %s%s", why, name, want, testkit.Describe(err), c.Context())
		}
		if testkit.FrameDiff(queryReply(name, want), got) == "" {
			return
		}
	}
	k.Fatalf("%s; %s queried the users for %v\n  want: %q\n   got: %q (last answer)\n"+
		"hint: when a client's connection ends, remove it from the map of logged-in clients",
		why, name, testkit.IOTimeout, want, got.Payload)
}
