package chatscaletest

import (
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// wipe stops the node, empties its store and starts it again: NATS
// restarted on an empty store (a new volume, a disk replaced), on the same
// port, so the servers reconnect to a NATS that has no stream and no bucket.
func (n *natsNode) wipe() {
	n.k.Helper()
	n.stop()
	if err := testkit.RemoveAll(n.store); err != nil {
		n.k.Fatalf("the suite empties the store of its NATS: %v", err)
	}
	n.start()
}

// storeWiped checks that a server outlives NATS restarted on an empty store
// (the attackers' "natswipe"): until it has made its stream and buckets
// again every request that needs them is answered Storage failed. — never
// a domain answer read off a missing stream ("not found", "Wrong username or
// password", an empty history) — and then it works again without a restart;
// with the stream gone, Close still returns in time (the library's retry of
// its consumer once held SIGTERM up for good).
func storeWiped(k *testkit.T, impl Impl) {
	k.Helper()
	n := startNATS(k)
	obs := observe(k, n.url())
	cfg := baseConfig(k, n.url())
	w := serve(k, impl, "W", cfg)
	alice := w.dial("alice")
	alice.newUser("alice")
	before := alice.createChannel("before-the-wipe")
	alice.join(before.ID)
	echo := proto.ReceiveChat{ChannelID: before.ID, Content: "before the wipe", UserID: alice.user.ID}
	alice.send(proto.WriteChat{Content: echo.Content})
	alice.expectChats("the echo of a message before the wipe", []proto.ReceiveChat{echo})

	n.wipe()

	bob := w.dial("bob")
	why := "after NATS restarted on an empty store"
	storageEventually(k, bob, why+": registering a new user",
		func(id uint64) proto.Requester {
			return proto.CreateUserRequest{Name: "bob", Password: password("bob"), RequestID: id}
		},
		func(m proto.Message) bool { r, ok := m.(proto.CreateUserResponse); return ok && r.User.Name == "bob" })
	loginEventually(k, bob, "bob", why+": the server logs a new user in")
	var after proto.Channel
	storageEventually(k, bob, why+": creating a channel",
		func(id uint64) proto.Requester {
			return proto.CreateChannelRequest{Name: "after-the-wipe", RequestID: id}
		},
		func(m proto.Message) bool {
			r, ok := m.(proto.CreateChannelResponse)
			after = r.Channel
			return ok && r.Channel.ID != 0
		})
	bob.join(after.ID)
	chatEventually(k, bob, proto.ReceiveChat{ChannelID: after.ID, Content: "after the wipe", UserID: bob.user.ID},
		why+": a chat message is stored and echoed (the server made its stream again and follows the new one)")

	// A bucket that is missing is a storage failure, not "no such user".
	obs.deleteBucket(usersBucket)
	id := bob.id()
	got := bob.call(proto.GetUserRequest{Name: "bob", RequestID: id})
	if want := (proto.ErrorResponse{RequestID: id, Value: proto.MsgStorageFailed}); got != want && !obs.hasBucket(usersBucket) {
		k.Fatalf("%s: GetUser of a user who exists, with the users bucket deleted (the suite deleted it)\nwant: %s (the bucket is missing: a storage failure)\ngot:  %s\n"+
			"(a JetStream 404 is \"no message\" only with err_code 10037; 10059 is the stream itself missing)%s",
			bob.who, show(want), show(got), bob.context())
	}

	// Close with the stream gone: within testkit's bound (w.srv.Close fails
	// the check otherwise, naming where it is stuck).
	obs.deleteStream(streamName)
	w.srv.Close()
}

// storageEventually sends the request made by req until ok accepts the
// answer, within testkit.IOTimeout and the request timeout; meanwhile only
// Storage failed. is a right answer.
func storageEventually(k *testkit.T, c *client, why string, req func(id uint64) proto.Requester, ok func(proto.Message) bool) {
	k.Helper()
	tick := time.NewTicker(50 * time.Millisecond) // paces the retries; the answer is what is waited for
	defer tick.Stop()
	deadline := time.Now().Add(testkit.IOTimeout + 3*time.Second)
	for {
		r := req(c.id())
		got := c.call(r)
		if ok(got) {
			return
		}
		failed := got == proto.Message(proto.ErrorResponse{RequestID: r.Request(), Value: proto.MsgStorageFailed})
		if !failed || time.Now().After(deadline) {
			k.Fatalf("%s: %s\nsent: %s\nwant: the answer (or %q until the server has made its stream and buckets again, within %v)\ngot:  %s%s%s",
				c.who, why, show(r), proto.MsgStorageFailed, testkit.IOTimeout, show(got), notImplemented(got), c.context())
		}
		<-tick.C
	}
}

// chatEventually writes want's content until its echo comes, within
// testkit.IOTimeout; meanwhile only Message not stored. is a right answer.
func chatEventually(k *testkit.T, c *client, want proto.ReceiveChat, why string) {
	k.Helper()
	deadline := time.Now().Add(testkit.IOTimeout + 3*time.Second)
	for {
		c.send(proto.WriteChat{Content: want.Content})
		got, err := c.tryNext(time.Until(deadline))
		for err == nil && isEvent(got) { // a login or a channel of someone else's
			got, err = c.tryNext(time.Until(deadline))
		}
		switch {
		case err != nil:
			k.Fatalf("%s: %s\nwant: the echo %s\ngot:  nothing (%v)%s", c.who, why, show(want), err, c.context())
		case got == proto.Message(want):
			return
		case got != proto.Message(proto.Error{Value: msgNotStored}) || time.Now().After(deadline):
			k.Fatalf("%s: %s\nwant: the echo %s (or %q until the stream is made again)\ngot:  %s%s", c.who, why, show(want), msgNotStored, show(got), c.context())
		}
	}
}

// hasBucket reports whether the bucket exists now (the server may have made
// it again between the suite's delete and its answer).
func (o *observer) hasBucket(bucket string) bool {
	ctx, cancel := o.ctx()
	defer cancel()
	_, err := o.js.KeyValue(ctx, bucket)
	return err == nil
}
