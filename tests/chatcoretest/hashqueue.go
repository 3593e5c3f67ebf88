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

// burstClients is checkRegistrationBurst's burst: more registrations at
// once than a queue of a fixed 128 per core holds on two cores, fewer than
// one address's connections (512).
const burstClients = 300

// checkRegistrationBurst: the hash queue is sized by time, not by a count.
// burstClients registrations arrive at once from one address, with hashes of
// a few milliseconds (BurstHash) and a HashWait of 5 minutes (so that even
// a machine so busy that a hash takes a second fits: the check's watchdog
// bounds the run instead): more than a fixed-count queue holds pile up, but
// the cores can hash them all within the wait, so every one is answered
// 110, in whatever order the server takes them — none Server busy.,
// none refused for its address. (A queue bounded by a fixed count refused
// 380 of the original load tester's 450 registrations, and the tester quit.)
func checkRegistrationBurst(k *testkit.T, impl Impl) {
	k.Helper()
	const wait = 5 * time.Minute
	e := start(k, impl, Config{BurstHash: true, HashWait: wait})
	clients := make([]*client, burstClients)
	for i := range clients {
		clients[i] = e.dial(fmt.Sprintf("registrant %d of %d", i+1, burstClients))
	}
	for i, c := range clients {
		c.send(proto.CreateUserRequest{RequestID: 1, Name: fmt.Sprintf("burst-%d", i), Password: "pw-burst"})
	}
	answers := map[string]int{}
	by := time.Now().Add(testkit.WatchdogTimeout)
	for _, c := range clients {
		c.nc.SetReadDeadline(by)
		m, err := proto.Read(c.r)
		if err != nil {
			k.Fatalf("%d registrations at once, HashWait %v: %s got no answer within %v (%s): a hash the "+
				"queue admits must start within HashWait, and one it refuses must be answered at once%s",
				burstClients, wait, c.who, testkit.WatchdogTimeout, describe(err), c.context())
		}
		answers[summary(m)]++
	}
	if answers[fmt.Sprint(int(proto.TypeCreateUserResponse))] != burstClients {
		k.Fatalf("%d registrations at once from one address, each hash a few milliseconds, HashWait %v\n"+
			"  want: all answered 110\n   got: %v\nAdmit a hash while it can expect to start within "+
			"HashWait (the hashes ahead of it × how long one takes ÷ the cores), not up to a fixed count; and an "+
			"address may register at least as many users at once as it may have connections (512)",
			burstClients, wait, answers)
	}
}

// checkRegistrationBudget: with AddressRegistrations 3 (an hour to refill),
// an address registers 3 users; its 4th registration is refused 100 "Too
// many registrations from your address, try again later." without a hash,
// from any connection; a name that exists is still answered "User already
// exists." (no hash, no budget), and the registered users log in.
func checkRegistrationBudget(k *testkit.T, impl Impl) {
	k.Helper()
	const budget = 3
	e := start(k, impl, Config{AddressRegistrations: budget, RegistrationWindow: time.Hour})
	c := e.dial("registrant")
	for i := range budget {
		c.register(fmt.Sprintf("budget-%d", i))
	}
	refused := proto.ErrorResponse{RequestID: 7, Value: proto.MsgTooManyRegistrations}
	other := e.dial("the same address, another connection")
	other.callExpect(fmt.Sprintf("a registration past the address's budget (AddressRegistrations %d): "+
		"createUser must refuse it before any hash; the given limiter does it: s.registrations.allowed(c.addr) "+
		"before the hash, s.registrations.count(c.addr) after it (admission.go)", budget),
		proto.CreateUserRequest{RequestID: 7, Name: "budget-over", Password: "pw"}, refused)
	other.callExpect("a registration of a name that exists, past the budget",
		proto.CreateUserRequest{RequestID: 8, Name: "budget-0", Password: "pw"},
		proto.ErrorResponse{RequestID: 8, Value: proto.MsgUserExists})
	other.authenticate("budget-1")
}
