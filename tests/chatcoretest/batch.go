package chatcoretest

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// checkBatchBound: a batch, one transaction, holds at most MaxBatch
// messages, however many are waiting and however long the commit window:
// an unbounded batch is an unbounded transaction, whose senders all wait for
// its one fsync. Twelve messages sent at once with MaxBatch 4 and a commit
// window long enough for all of them to arrive must be committed in batches
// of at most 4, one of them exactly 4 (the bound is a bound, not a target
// missed by one).
func checkBatchBound(k *testkit.T, impl Impl) {
	k.Helper()
	const maxBatch, writers = 4, 12
	var mu sync.Mutex
	var batches []int
	e := start(k, impl, Config{CommitWindow: 500 * time.Millisecond, MaxBatch: maxBatch, OnCommit: func(n int) {
		mu.Lock()
		batches = append(batches, n)
		mu.Unlock()
	}})
	var cs []*client
	for i := range writers {
		cs = append(cs, e.login(fmt.Sprintf("mb%02d", i)))
	}
	ch := cs[0].createChannel("mb")
	for _, c := range cs {
		c.join(ch.ID)
	}
	for i, c := range cs {
		c.send(proto.WriteChat{Content: fmt.Sprintf("bounded %d", i)})
	}
	for i, c := range cs {
		c.waitFor("every message is delivered", proto.ReceiveChat{ChannelID: ch.ID, Content: fmt.Sprintf("bounded %d", i), UserID: c.user.ID})
	}
	mu.Lock()
	defer mu.Unlock()
	sent := fmt.Sprintf("%d chat messages sent at once (MaxBatch %d, CommitWindow 500ms)", writers, maxBatch)
	if biggest := slices.Max(append([]int{0}, batches...)); biggest != maxBatch {
		k.Fatalf("%s\n  want: batches of at most %d messages, one of exactly %d (OnCommit's sizes)\n   got: %v\n"+
			"gather adds what is waiting and what comes within the window, and stops at MaxBatch: a bigger batch is a "+
			"transaction (and a wait for its senders) without bound", sent, maxBatch, maxBatch, batches)
	}
}
