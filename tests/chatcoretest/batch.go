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

// checkBatchReleased: once a batch is committed and delivered, the committer
// holds none of its messages. A committer that reuses its batch slice
// (append(batch[:0], first)) without clearing it keeps every request of its
// largest batch reachable — the sender, the content and the encoded frame —
// until a batch as large comes again: up to MaxBatch messages of MaxMessage
// bytes each, twice, for as long as the server runs. Sixteen messages of
// 250 KiB (MaxMessage 256 KiB) are sent at once, each to a channel of its
// own; once every echo has come, the server's live heap must be back within
// 1 MiB of where it was (a batch kept held 4 MiB more: the contents and
// their encoded frames). The commit window is long, 3 s, so that the sixteen
// make one batch; the sixteenth ends it (MaxBatch).
func checkBatchReleased(k *testkit.T, impl Impl) {
	k.Helper()
	const writers, size = 16, 250 << 10
	var mu sync.Mutex
	var batches []int
	e := start(k, impl, Config{MaxMessage: 256 << 10, MaxBatch: writers, CommitWindow: 3 * time.Second,
		OnCommit: func(n int) {
			mu.Lock()
			batches = append(batches, n)
			mu.Unlock()
		}})
	var cs []*client
	var chs []proto.Channel
	for i := range writers {
		c := e.login(fmt.Sprintf("br%02d", i))
		ch := c.createChannel(fmt.Sprintf("br%02d", i))
		c.join(ch.ID)
		cs, chs = append(cs, c), append(chs, ch)
	}
	for _, c := range cs {
		c.settle()
	}
	contents := make([]string, writers)
	for i := range contents {
		contents[i] = chatContent(i, size)
	}
	before := testkit.ReadFootprint()
	for i, c := range cs {
		c.send(proto.WriteChat{Content: contents[i]})
	}
	for i, c := range cs {
		c.waitFor("every message is echoed", proto.ReceiveChat{ChannelID: chs[i].ID, Content: contents[i], UserID: c.user.ID})
		c.backlog = nil
	}
	after := testkit.ReadFootprint()
	mu.Lock()
	sizes := slices.Clone(batches)
	mu.Unlock()
	const slack = 1 << 20
	if after.Heap > before.Heap+slack {
		k.Fatalf("sent: %d chat messages of %d KiB at once (MaxBatch %d, CommitWindow 3s; batches %v), each echoed\n"+
			"expected: the live heap back within %d KiB of where it was before them (%d KiB)\n"+
			"     got: %d KiB, %d KiB more\n"+
			"likely cause: the committer keeps the batch it committed — a slice reused with append(batch[:0], …) "+
			"still points at every request of its largest batch; clear(batch) after the commit",
			writers, size>>10, writers, sizes, slack>>10, before.Heap>>10, after.Heap>>10, (after.Heap-before.Heap)>>10)
	}
}
