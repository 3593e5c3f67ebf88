package chatscaletest

import (
	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// loginOnRemadeBucket checks that a server compares the users bucket with
// the one it knew before it opens a session, not only on its refreshes: a
// user who registered in a bucket made again logs in at once, as that
// user, and stays logged in when the server ends the old bucket's
// sessions. The suite makes the bucket again while server A is connected
// (no reconnect) and registers carol on A at once, long before A's next
// refresh: the new bucket hands her the id of alice, still logged in on A
// under the old one. A server that opened her session first told her she
// was "already logged in" (alice's key), or ended her session with
// alice's at its next refresh — as 8.1's store-wiped saw under load, one
// run in ten, when the re-login won that race.
func loginOnRemadeBucket(k *testkit.T, impl Impl) {
	r := newSessionRig(k, impl)
	why := "the suite made the users bucket again, server A connected to NATS all along"
	alice := r.a.dial("alice")
	registerEventually(k, alice, "alice")
	r.obs.remakeStream("KV_" + usersBucket)

	carol := r.a.dial("carol")
	storageEventually(k, carol, why+": registering carol in the new bucket",
		func(id uint64) proto.Requester {
			return proto.CreateUserRequest{Name: "carol", Password: password("carol"), RequestID: id}
		},
		func(m proto.Message) bool {
			got, ok := m.(proto.CreateUserResponse)
			return ok && got.User.Name == "carol"
		})
	storageEventually(k, carol, why+": carol, just registered in the new bucket, logs in at once on A, which still has alice's session of the old bucket "+
		"(likely cause: the session is opened before the bucket's identity is compared; compare it on every login, and end the old sessions first)",
		func(id uint64) proto.Requester {
			return proto.AuthenticateRequest{Name: "carol", Password: password("carol"), RequestID: id}
		},
		func(m proto.Message) bool {
			got, ok := m.(proto.AuthenticateResponse)
			if ok {
				carol.user = got.User
			}
			return ok && got.User.Name == "carol"
		})
	sessionEnded(k, alice, why, r.cfg.SessionTTL+testkit.IOTimeout)
	for range 5 { // a refresh every TTL/3: one, at least, passes
		<-r.tick.C
	}
	id := carol.id()
	carol.callExpect(why+": carol logged in on the new bucket before A ended the old sessions, and stays logged in "+
		"(likely cause: the old sessions were ended after her login, hers with them; compare the bucket's identity before a login opens a session)",
		proto.GetUserRequest{Name: "carol", RequestID: id}, proto.GetUserResponse{RequestID: id, User: carol.user})
}
