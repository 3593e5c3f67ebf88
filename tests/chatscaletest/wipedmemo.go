package chatscaletest

import (
	"fmt"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// oldPasswordRefused checks that what a server keeps by user id does not
// outlive the users bucket that handed the ids out (attacker5's F2): old,
// logged in on server a before the bucket went, had a login memo there
// (its password proved, kept 10 minutes); a new user who registers on
// server b after and is handed old's id must not be logged in on a with
// old's password. It registers on b until the new bucket hands out old's
// id (the first user, in these rounds).
func oldPasswordRefused(k *testkit.T, a, b *chatServer, old *client, why, suffix string) {
	k.Helper()
	reg := b.dial("victim" + suffix)
	var victim string
	var got proto.User
	for i := 0; got.ID < old.user.ID && i < 16; i++ {
		victim = fmt.Sprintf("victim%s%d", suffix, i)
		storageEventually(k, reg, "registering "+victim,
			func(id uint64) proto.Requester {
				return proto.CreateUserRequest{Name: victim, Password: password(victim), RequestID: id}
			},
			func(m proto.Message) bool {
				r, ok := m.(proto.CreateUserResponse)
				got = r.User
				return ok && r.User.Name == victim
			})
	}
	if got.ID != old.user.ID {
		k.Fatalf("%s: %s\nwant: the new users bucket hands out user id %d (%s's, before) to one of the first users registered on it\ngot:  %s has id %d%s",
			reg.who, why, old.user.ID, old.user.Name, victim, got.ID, reg.context())
	}
	c := a.dial("intruder" + suffix)
	var answer proto.Message
	var sent proto.AuthenticateRequest
	storageEventually(k, c, "logging in as "+victim+" with "+old.user.Name+"'s password",
		func(id uint64) proto.Requester {
			sent = proto.AuthenticateRequest{Name: victim, Password: password(old.user.Name), RequestID: id}
			return sent
		},
		func(m proto.Message) bool {
			answer = m
			r, ok := m.(proto.ErrorResponse)
			return !ok || r.Value != proto.MsgStorageFailed
		})
	want := proto.ErrorResponse{RequestID: sent.RequestID, Value: proto.MsgWrongPassword}
	if answer != proto.Message(want) {
		k.Fatalf("%s: %s; then %s registered on server %s and was handed id %d, %s's before\nsent: %s\nwant: %s (that is %s's password, not %s's)\ngot:  %s%s\n"+
			"(likely cause: a login memo, or another cache keyed by user id, kept from the old users bucket; forget it where the server ends its sessions, or key it by the bucket's identity)",
			c.who, why, victim, b.name, got.ID, old.user.Name, show(sent), show(want), old.user.Name, victim, show(answer), c.context())
	}
}
