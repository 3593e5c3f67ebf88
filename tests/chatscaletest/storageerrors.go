package chatscaletest

import (
	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// registerWhileDown checks that a storage error never reads as a domain
// answer: a registration while NATS is down is Storage failed., never
// "User already exists." (the client would give up a name that is free).
// The Unique check's deleted users bucket meets the same mistake through
// another error; this one is the everyday case, an outage.
func registerWhileDown(k *testkit.T, impl Impl) {
	k.Helper()
	n := startNATS(k)
	cfg := baseConfig(k, n.url())
	srv := serve(k, impl, "D", cfg)
	hal := srv.dial("hal")
	hal.register("hal") // the server is connected and the buckets exist
	n.stop()
	id := hal.id()
	req := proto.CreateUserRequest{Name: "free-name", Password: password("free-name"), RequestID: id}
	got := hal.call(req)
	if want := (proto.ErrorResponse{RequestID: id, Value: proto.MsgStorageFailed}); got != want {
		cause := ""
		if got == (proto.ErrorResponse{RequestID: id, Value: proto.MsgUserExists}) {
			cause = "\nlikely cause: every error of the users bucket's Create is read as \"the key exists\"; only jetstream.ErrKeyExists is, the rest is a storage failure"
		}
		k.Fatalf("%s: a registration of a free name while NATS is down\nsent: %s\nwant: %s\ngot:  %s%s%s%s",
			hal.who, show(req), show(want), show(got), notImplemented(got), cause, hal.context())
	}
}
