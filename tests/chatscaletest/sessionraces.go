package chatscaletest

import (
	"fmt"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// loginRaces checks that a session is one key claimed by one atomic
// create, whoever asks:
//   - the same user twice on ONE server: the key that names this server
//     is a session too, not one's own to take again (a second login there
//     is refused like one elsewhere);
//   - one user on two servers at the same moment, for racers users in
//     turn: each login's request is sent less its last byte, then the two
//     last bytes back to back, so that both servers read their request
//     together and a look-up followed by a write (Get, then Put) meets
//     its race every time.
func loginRaces(k *testkit.T, impl Impl) {
	k.Helper()
	n := startNATS(k)
	cfg := baseConfig(k, n.url())
	a, b := serve(k, impl, "A", cfg), serve(k, impl, "B", cfg)

	ivy, ivy2 := a.dial("ivy"), a.dial("ivy again")
	ivy.newUser("ivy")
	id := ivy2.id()
	req := proto.AuthenticateRequest{Name: "ivy", Password: password("ivy"), RequestID: id}
	if got, want := ivy2.call(req), (proto.ErrorResponse{RequestID: id, Value: proto.MsgUserLoggedIn("ivy")}); got != want {
		k.Fatalf("%s: ivy is logged in on server A; a second connection to A logs in as ivy\nsent: %s\nwant: %s\ngot:  %s%s\n"+
			"likely cause: a session key that names this server is taken as this server's to claim again; a login claims the key only by creating it%s",
			ivy2.who, show(req), show(want), show(got), notImplemented(got), ivy2.context())
	}

	const racers = 16
	reg := a.dial("registrar")
	for i := range racers {
		reg.register(fmt.Sprintf("racer-%d", i))
	}
	for i := range racers {
		name := fmt.Sprintf("racer-%d", i)
		ca, cb := a.dial(name+" on A"), b.dial(name+" on B")
		reqA := proto.AuthenticateRequest{Name: name, Password: password(name), RequestID: 1}
		reqB := proto.AuthenticateRequest{Name: name, Password: password(name), RequestID: 2}
		fa, fb := encodeOrFail(k, reqA), encodeOrFail(k, reqB)
		writeOrFail(k, ca, fa[:len(fa)-1])
		writeOrFail(k, cb, fb[:len(fb)-1])
		// Both servers hold all of their request but its last byte; the
		// two last bytes go out together.
		writeOrFail(k, ca, fa[len(fa)-1:])
		writeOrFail(k, cb, fb[len(fb)-1:])
		ca.sent, cb.sent = append(ca.sent, show(reqA)), append(cb.sent, show(reqB))
		ra := ca.waitFor("the answer to a login raced on two servers", isAnswerTo(1))
		rb := cb.waitFor("the answer to a login raced on two servers", isAnswerTo(2))
		_, okA := ra.(proto.AuthenticateResponse)
		_, okB := rb.(proto.AuthenticateResponse)
		taken := func(id uint64) proto.Message {
			return proto.ErrorResponse{RequestID: id, Value: proto.MsgUserLoggedIn(name)}
		}
		if okA == okB || (!okA && ra != taken(1)) || (!okB && rb != taken(2)) {
			k.Fatalf("one user (%s) logging in on servers A and B at the same moment\nsent: %s to each\nwant: one 116 and one %q\ngot on A: %s%s\ngot on B: %s\n"+
				"likely cause: the login looks the session key up, then writes it (two servers both see it absent); claim it with one create that fails if the key exists",
				name, show(reqA), proto.MsgUserLoggedIn(name), show(ra), notImplemented(ra), show(rb))
		}
	}
}

// isAnswerTo matches the answer to request id.
func isAnswerTo(id uint64) func(proto.Message) bool {
	return func(m proto.Message) bool { r, ok := m.(proto.Requester); return ok && r.Request() == id }
}

// encodeOrFail encodes m for the wire.
func encodeOrFail(k *testkit.T, m proto.Message) []byte {
	k.Helper()
	b, err := proto.Encode(m)
	if err != nil {
		k.Fatalf("encode %s: %v", show(m), err)
	}
	return b
}

// writeOrFail writes raw bytes on c's connection, within testkit.IOTimeout.
func writeOrFail(k *testkit.T, c *client, b []byte) {
	k.Helper()
	c.nc.SetWriteDeadline(time.Now().Add(testkit.IOTimeout))
	if _, err := c.nc.Write(b); err != nil {
		k.Fatalf("%s: send: %v", c.who, err)
	}
}
