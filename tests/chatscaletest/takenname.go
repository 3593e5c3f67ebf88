package chatscaletest

import (
	"fmt"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// takenNameCostsNoHash: registering a name that is taken is answered "User
// already exists." without hashing the password. The original load tester
// registers every tester again on each run and takes that answer as its cue
// to log in; a server that hashed first spent 451 hashes on a rerun at 450
// clients (7–9 s of the tester's 10 s on the course's machine, and one run
// in three timed out, docs/chatcore.md §8). With a hash made slow on
// purpose, ten registrations of a taken name must take less than three
// times one real registration; hashing each would take ten.
func takenNameCostsNoHash(k *testkit.T, impl Impl) {
	k.Helper()
	const again = 10
	cfg := baseConfig(k, startNATS(k).url())
	// Four times the default cost, so that a hash shows beside a lookup
	// (about 70 ms of a core here, several times that under -race). Not
	// more: at 2,000,000 iterations a starved -race subject took longer
	// than a read's deadline for the one real registration (1 run in 3
	// beside 8 busy loops), and its Close waited for the hash.
	cfg.HashIterations = 400_000
	c := serve(k, impl, "A", cfg).dial("a client")
	start := time.Now()
	c.register("taken")
	one := time.Since(start)
	start = time.Now()
	ids := make([]uint64, again)
	for i := range ids {
		ids[i] = c.id()
		c.send(proto.CreateUserRequest{Name: "taken", Password: fmt.Sprintf("guess-%d", i), RequestID: ids[i]})
	}
	for _, id := range ids {
		got := c.waitFor(fmt.Sprintf("the answer to registering the taken name again (request %d)", id), func(m proto.Message) bool {
			r, ok := m.(proto.Requester)
			return ok && r.Request() == id
		})
		if want := (proto.ErrorResponse{RequestID: id, Value: proto.MsgUserExists}); got != want {
			k.Fatalf("%s: registering a name that is taken\nwant: %s\ngot:  %s%s%s", c.who, show(want), show(got), notImplemented(got), c.context())
		}
	}
	if took := time.Since(start); took > 3*one {
		k.Fatalf("%d registrations of a taken name took %v, one registration with a hash %v (HashIterations %d): "+
			"want under %v\n(likely cause: createUser hashes the password before it looks the name up; "+
			"look it up first (lookupUser) and answer %q at once, as chapter 07 does: the original load tester "+
			"registers every tester again on each run, and each answer would cost a hash)",
			again, took.Round(time.Millisecond), one.Round(time.Millisecond), cfg.HashIterations, (3 * one).Round(time.Millisecond), proto.MsgUserExists)
	}
}
