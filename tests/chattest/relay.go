package chattest

import (
	"bytes"
	"fmt"
	"testing"

	"serverlab/tests/testkit"
	"serverlab/tools/given/wire"
)

func broadcastFrame(sender, target string, payload []byte) wire.Frame {
	return wire.Frame{Type: wire.Broadcast, Sender: sender, Target: target, Payload: payload}
}

func privateFrame(sender, target string, payload []byte) wire.Frame {
	return wire.Frame{Type: wire.PrivateMsg, Sender: sender, Target: target, Payload: payload}
}

// Broadcast checks exercise 2.2: a BROADCAST reaches every other logged-in
// client exactly once, never its sender, and always carries the sender's
// authenticated name.
func Broadcast(t *testing.T, impl Impl) {
	k := testkit.New(t, "2.2")
	names := []string{"ann", "ben", "cat", "dan"}
	e := start(k, impl, Config{}, names...)
	conns := make([]*testkit.Conn, len(names))
	for i, name := range names {
		conns[i] = e.loginAs(name)
	}

	// Round i: client i broadcasts, every other client must receive it. The
	// rounds run one after the other, so a frame that reaches a client twice,
	// or comes back to its sender, is read in the place of the next expected
	// one and caught there.
	for i, name := range names {
		// What the client writes into its header is not to be trusted: each
		// claims to be the next client, or the server, and names a target.
		spoof := []string{names[(i+1)%len(names)], wire.ServerName, "mallory", names[i]}[i]
		target := []string{everyone, "", "all", names[(i+2)%len(names)]}[i]
		payload := []byte(fmt.Sprintf("round %d: hello from %s", i, name))
		if i == 2 {
			payload = bytes.Repeat([]byte{'x', 0, '\n', 0xff}, wire.MaxPayload/4) // the largest payload, binary
		}
		if i == 3 {
			payload = nil
		}
		send(k, conns[i], broadcastFrame(spoof, target, payload))
		want := broadcastFrame(name, target, payload)
		why := fmt.Sprintf("%s broadcast %v; every other client receives it once, the sender never (the "+
			"header's sender is the client's lie: the server writes the authenticated name; the target is "+
			"relayed as the client wrote it, as the original does)",
			name, brief(broadcastFrame(spoof, target, payload)))
		for j, other := range names {
			if j != i {
				expect(k, conns[j], other, want, why)
			}
		}
	}

	// A burst from one sender arrives complete and in order.
	const burst = 30
	for n := range burst {
		conns[0].SendFrame(broadcastFrame("ann", everyone, fmt.Appendf(nil, "burst %d", n)))
	}
	for n := range burst {
		want := broadcastFrame("ann", everyone, fmt.Appendf(nil, "burst %d", n))
		for j := 1; j < len(names); j++ {
			expect(k, conns[j], names[j], want, fmt.Sprintf("ann broadcast %d messages back to back (frames from one sender arrive in order)", burst))
		}
	}

	// The last round's sender, dan, has not read since; anything he was sent
	// by mistake comes before ben's fence.
	conns[1].SendFrame(broadcastFrame("ben", everyone, []byte("fence")))
	for j, name := range names {
		if j != 1 {
			expect(k, conns[j], name, broadcastFrame("ben", everyone, []byte("fence")),
				"after every client broadcast once, ben broadcast a last message (a sender never gets its own broadcast back)")
		}
	}

	// A client that has not logged in receives nothing: a newcomer who then
	// logs in gets only what is broadcast after.
	late := e.loginAsNew("eve")
	conns[2].SendFrame(broadcastFrame("cat", everyone, []byte("welcome eve")))
	expect(k, late, "eve", broadcastFrame("cat", everyone, []byte("welcome eve")),
		"eve logged in after all the broadcasts above, then cat broadcast")
	checkQuietPastLoginTimeout(k, impl)
	checkWriteFailCloses(k, impl)  // writefail.go
	checkHeldPushMoves(k, impl)    // heldpush.go
	checkOneWritePerBatch(k, impl) // writecalls.go
}

// loginAsNew registers name and logs in.
func (e *env) loginAsNew(name string) *testkit.Conn {
	e.k.Helper()
	e.register(name)
	return e.loginAs(name)
}

// PrivateMessage checks exercise 2.3: a PRIVATE_MSG reaches its target only,
// with the sender's authenticated name and the target's name; a target that
// is not online gets the sender a reply from the server.
func PrivateMessage(t *testing.T, impl Impl) {
	k := testkit.New(t, "2.3")
	e := start(k, impl, Config{}, "alice", "bob", "carol", "dave")
	alice, bob, carol := e.loginAs("alice"), e.loginAs("bob"), e.loginAs("carol")
	// dave is registered but never logs in.

	alice.SendFrame(privateFrame("carol", "bob", []byte("hi bob, it's alice")))
	expect(k, bob, "bob", privateFrame("alice", "bob", []byte("hi bob, it's alice")),
		"alice sent a PRIVATE_MSG to bob, with sender \"carol\" in her header (the server writes the authenticated name)")

	// carol must not have received it: alice's next message to her comes first.
	alice.SendFrame(privateFrame("alice", "carol", []byte("fence for carol")))
	expect(k, carol, "carol", privateFrame("alice", "carol", []byte("fence for carol")),
		"after alice's private message to bob, she sent one to carol (only the target receives a private message)")
	// Nor alice herself: bob's answer must be the next thing she reads.
	bob.SendFrame(privateFrame("bob", "alice", []byte("hi alice")))
	expect(k, alice, "alice", privateFrame("bob", "alice", []byte("hi alice")),
		"alice sent private messages to bob and carol, then bob answered her (the sender gets no copy)")

	for _, target := range []string{"dave", "nobody", ""} {
		alice.SendFrame(privateFrame("alice", target, []byte("are you there?")))
		expect(k, alice, "alice", privateFrame(wire.ServerName, "alice", []byte(notOnline)),
			fmt.Sprintf("alice sent a PRIVATE_MSG to %q, who is not online", target))
	}

	// Many messages, the largest payload among them, arrive whole and in order.
	big := bytes.Repeat([]byte("0123456789abcdef"), wire.MaxPayload/16)
	for n := range 20 {
		payload := fmt.Appendf(nil, "message %d", n)
		if n == 10 {
			payload = big
		}
		send(k, carol, privateFrame("carol", "bob", payload))
	}
	for n := range 20 {
		payload := fmt.Appendf(nil, "message %d", n)
		if n == 10 {
			payload = big
		}
		expect(k, bob, "bob", privateFrame("carol", "bob", payload), "carol sent bob 20 private messages back to back")
	}

	// A message to oneself is a message to an online user.
	carol.SendFrame(privateFrame("carol", "carol", []byte("note to self")))
	expect(k, carol, "carol", privateFrame("carol", "carol", []byte("note to self")), "carol sent a PRIVATE_MSG to herself")
	checkPrivateHeldLockFree(k, impl) // heldpush.go
}
