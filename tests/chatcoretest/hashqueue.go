package chatcoretest

import (
	"fmt"
	"runtime"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// hashWait is the HashWait of checkHashQueue: far shorter than one slow
// hash, so that a request whose hash finds every core taken cannot get one
// in time.
const hashWait = 10 * time.Millisecond

// checkHashQueue: a password hash runs in the hash queue. At most GOMAXPROCS
// hashes run at once, and one that cannot start within HashWait is not
// computed: its request is answered 100 "Server busy." with its request id,
// the protocol's text as it is, neither a wrong password nor a hash nobody
// waits for. With a slow hash, HashWait 10 ms and twice as many registrations
// (then logins of unknown names, which are checked against a dummy hash) at
// once as this machine has cores, some must be refused so.
func checkHashQueue(k *testkit.T, impl Impl) {
	k.Helper()
	e := start(k, impl, Config{SlowHash: true, HashWait: hashWait, HashQueue: 1000, AddressFailures: 1000})
	n := 2*runtime.NumCPU() + 6
	hashesAtOnce(k, e, n, "registrations", func(i int) proto.Requester {
		return proto.CreateUserRequest{RequestID: 1, Name: fmt.Sprintf("hq-user-%d", i), Password: password("hq")}
	}, proto.TypeCreateUserResponse)
	hashesAtOnce(k, e, n, "logins of unknown names", func(i int) proto.Requester {
		return proto.AuthenticateRequest{RequestID: 1, Name: fmt.Sprintf("hq-nobody-%d", i), Password: "guess"}
	}, proto.TypeErrorResponse)
}

// hashesAtOnce sends request(i) on n fresh connections at once; each answer
// must be its own (of type done, or a 100) and some must be Server busy.
func hashesAtOnce(k *testkit.T, e *env, n int, what string, request func(i int) proto.Requester, done proto.Type) {
	k.Helper()
	clients := make([]*client, n)
	for i := range clients {
		clients[i] = e.dial(fmt.Sprintf("hash client %d", i))
		clients[i].settle()
	}
	for i, c := range clients {
		c.send(request(i))
	}
	busy, answers := 0, map[string]int{}
	for i, c := range clients {
		m := c.next(fmt.Sprintf("%d %s at once (HashWait %v)", n, what, hashWait))
		r, ok := m.(proto.Requester)
		if !ok || r.Request() != 1 || (m.Type() != done && m.Type() != proto.TypeErrorResponse) {
			k.Fatalf("%d %s at once: connection %d: want the answer to %s, got %s", n, what, i, show(request(i)), show(m))
		}
		if same(m, proto.ErrorResponse{RequestID: 1, Value: proto.MsgServerBusy}) {
			busy++
		}
		answers[summary(m)]++
	}
	if busy == 0 {
		k.Fatalf("%d %s at once, each needing a slow password hash, on a machine of %d cores, with HashWait %v\n"+
			"  want: some answered 100 %q (at most GOMAXPROCS hashes run at once; one that cannot start within "+
			"HashWait is not computed)\n   got: none; the answers: %v\n"+
			"Hash through s.argon2 (the hash queue), and return its error as it is", n, what, runtime.NumCPU(),
			hashWait, proto.MsgServerBusy, answers)
	}
}

// summary is what an answer says, without the ids that differ per user.
func summary(m proto.Message) string {
	if r, ok := m.(proto.ErrorResponse); ok {
		return fmt.Sprintf("100 %q", r.Value)
	}
	return fmt.Sprintf("%d", m.Type())
}
