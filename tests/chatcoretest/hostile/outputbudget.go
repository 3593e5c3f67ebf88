package hostile

import (
	"fmt"
	"net"
	"runtime"
	"strings"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// checkOutputBudget: what a server queues for all its clients together is
// bounded, not only what it queues for each. A channel holds ~1 MiB of
// history. 16 clients that read nothing (small socket buffers) each send 6
// GetChats of it and then a chat message, their marker, in one write (the
// first alone, so that its writer is stuck on a history with more queued
// behind it). With MaxPending 16 MiB none is dropped, so only the
// server-wide OutputBudget (8 MiB) can bound them: once the watcher has
// every marker, the server's live heap may have grown by the budget and a
// little more, where outboxes bounded one by one hold ~16 × 6 MiB; the
// answers that do not fit are Server busy. (In a probe of 2026-12-07, 600
// such clients held 1.2 GiB, and an honest client's echo took 6.6 s.) Then
// an honest client's chat message is echoed within IOTimeout, and the 16
// are reset: the budget must come back (checkBudgetBack).
func checkOutputBudget(k *testkit.T, start Start) {
	const (
		sinks, asks     = 16, 6
		messages, size  = 64, 16000 // ~1 MiB of history, as checkOutboxBytes
		budget, pending = 8 << 20, 16 << 20
		slack           = 8 << 20 // the store's cache, buffers, the allocator's noise
	)
	addr := start(k, Limits{OutputBudget: budget, MaxPending: pending, WriteTimeout: time.Minute})
	watcher := dial(k, addr, "an honest client that reads")
	watcher.login("budget-watcher")
	ch := watcher.createChannel("budget")
	watcher.join(ch.ID)
	for i := range messages - 1 { // sent at once: the server may store them in one batch
		watcher.send(proto.WriteChat{Content: fmt.Sprintf("%02d", i) + strings.Repeat("x", size-2)})
	}
	watcher.say(ch.ID, fmt.Sprintf("%02d", messages-1)+strings.Repeat("x", size-2))
	frame := historyFrame(k, watcher, ch.ID, messages)

	cs := make([]*client, sinks)
	for i := range cs {
		cs[i] = wrap(k, addr, k.DialSmall(addr), fmt.Sprintf("non-reading history client %d of %d", i+1, sinks))
		cs[i].login(fmt.Sprintf("budget-sink-%d", i+1))
		cs[i].join(ch.ID)
	}
	watcher.say(ch.ID, "every non-reading client has joined")
	base := liveHeap()

	// The first client's history is queued before the others ask, so that
	// it holds as much of the budget as fits: one answer its writer is
	// stuck on, the rest queued behind it (what a drop or a failed write
	// must give back). Then the other 15 ask at once.
	markers := map[uint32]string{}
	askHistory(k, cs[0], ch.ID, messages, asks, markers)
	awaitMarkers(k, watcher, markers, 1, asks)
	for _, c := range cs[1:] {
		askHistory(k, c, ch.ID, messages, asks, markers)
	}
	awaitMarkers(k, watcher, markers, sinks, asks)
	grew := liveHeap() - base
	k.Logf("%d non-reading clients × %d GetChats of ~1 MiB: the server's live heap grew by %d KiB (OutputBudget %d "+
		"KiB)", sinks, asks, grew>>10, budget>>10)
	if grew > budget+slack {
		k.Fatalf("%d clients that read nothing each asked for %d histories of ~1 MiB (%d MiB in all) and got them "+
			"queued: the server's live heap grew by %d MiB, past OutputBudget (%d MiB) + %d MiB.\nMaxPending bounds "+
			"one connection, not the server: every queued frame must draw on one server-wide budget (guard.Budget), "+
			"given back when it is written or discarded, and a large reply (history) that does not fit is answered "+
			"100 \"Server busy.\" instead of being queued (600 such clients held 1.2 GiB)", sinks, asks, sinks*asks,
			grew>>20, budget>>20, slack>>20)
	}
	watcher.say(ch.ID, "an honest message while the history clients hold the server")

	// Abrupt disconnects: every byte they held must come back to the budget.
	for _, c := range cs {
		if tc, ok := c.nc.(*net.TCPConn); ok {
			tc.SetLinger(0) // RST: the server's writes fail at once
		}
		c.nc.Close()
	}
	gone := map[uint32]bool{}
	for _, c := range cs {
		gone[c.user.ID] = true
	}
	deadline := time.Now().Add(testkit.IOTimeout)
	for len(gone) > 0 {
		m, err := watcher.read(deadline)
		if err != nil {
			k.Fatalf("%d non-reading clients were reset; within %v the watcher heard %d of their logouts (%s)%s",
				sinks, testkit.IOTimeout, sinks-len(gone), testkit.Describe(err), watcher.context())
		}
		if lo, ok := m.(proto.UserLogoutEvent); ok {
			delete(gone, lo.UserID)
		}
	}
	checkBudgetBack(k, addr, watcher, ch.ID, ch.ID, messages, budget, frame)
}

// historyFrame is the size of the frame of c's GetChats of ch: what one
// history answer draws on the output budget.
func historyFrame(k *testkit.T, c *client, ch uint32, messages int) int {
	k.Helper()
	m := c.call(proto.GetChatsRequest{RequestID: c.id(), ChannelID: ch, Limit: uint32(messages)}, "GetChats")
	r, ok := m.(proto.GetChatsResponse)
	if !ok || len(r.Messages) != messages {
		k.Fatalf("%s: GetChats of a channel of %d messages: want 106 with all of them, got %s%s", c.who, messages,
			show(m), c.context())
	}
	b, err := proto.Encode(r)
	if err != nil {
		k.Fatalf("test bug: encode %s: %v", show(m), err)
	}
	return len(b)
}

// askHistory sends asks GetChats of ch and then a chat message, the
// marker (recorded in markers), in one write, so that the marker is
// handled after them.
func askHistory(k *testkit.T, c *client, ch uint32, messages, asks int, markers map[uint32]string) {
	k.Helper()
	var reqs []proto.Message
	for range asks {
		reqs = append(reqs, proto.GetChatsRequest{RequestID: c.id(), ChannelID: ch, Limit: uint32(messages)})
	}
	markers[c.user.ID] = "the marker of " + c.user.Name
	if !c.trySend(append(reqs, proto.WriteChat{Content: markers[c.user.ID]})...) {
		k.Fatalf("%s: sending %d GetChats and a chat message failed: the server closed the connection%s",
			c.who, asks, c.context())
	}
}

// awaitMarkers reads the watcher's channel until every marker has come:
// the clients' requests before them are handled. A client logged out
// before its marker fails the check.
func awaitMarkers(k *testkit.T, watcher *client, markers map[uint32]string, clients, asks int) {
	k.Helper()
	// The server reads the store for each GetChats it does not refuse, one
	// after the other per client: more than one IOTimeout on a busy machine.
	wait := 3 * testkit.IOTimeout
	deadline := time.Now().Add(wait)
	for len(markers) > 0 {
		m, err := watcher.read(deadline)
		if err != nil {
			k.Fatalf("%d clients that read nothing each sent %d GetChats of ~1 MiB, then a chat message; within %v "+
				"the watcher in the channel heard %d of the messages (%s): the server is still busy with their "+
				"history, or stopped serving%s", clients, asks, wait, clients-len(markers), testkit.Describe(err),
				watcher.context())
		}
		switch m := m.(type) {
		case proto.ReceiveChat:
			if markers[m.UserID] == m.Content {
				delete(markers, m.UserID)
			}
		case proto.UserLogoutEvent:
			if _, ok := markers[m.UserID]; ok {
				k.Fatalf("user %d, one of %d clients that read nothing and asked for %d histories of ~1 MiB each, "+
					"was logged out before its chat message: no client should be dropped here (MaxPending is "+
					"larger than all it asked for; the history that does not fit the server's OutputBudget is "+
					"answered 100 \"Server busy.\", not queued)", m.UserID, clients, asks)
			}
		}
	}
}

// checkBudgetBack: with nothing queued for anyone, the half of the budget
// that large replies may use holds as many history answers as fit in it.
// A fresh client that reads nothing (small buffers) asks for that many of
// ch and then says a marker in watched, the watcher's channel; once the
// watcher has the marker it reads them: every one must be a 106. A server that forgot to give back what a dropped
// connection had queued has less room, and answers Server busy. The
// writers of the clients just reset give their bytes back a moment after
// their readers end, so a refused attempt is tried again, on a new
// connection, until IOTimeout has passed.
func checkBudgetBack(k *testkit.T, addr string, watcher *client, ch, watched uint32, messages, budget, frame int) {
	k.Helper()
	const tries = 3
	fit := budget / 2 / frame
	var got []string
	var c *client
	for try := 1; try <= tries; try++ {
		c = wrap(k, addr, k.DialSmall(addr), fmt.Sprintf("a new non-reading client (attempt %d of %d)", try, tries))
		c.login(fmt.Sprintf("budget-back-%d", try))
		c.join(watched)
		markers := map[uint32]string{}
		askHistory(k, c, ch, messages, fit, markers)
		awaitMarkers(k, watcher, markers, 1, fit)
		got = got[:0]
		ok := true
		for id := c.next - uint64(fit) + 1; id <= c.next; id++ {
			m := c.answer(id, "GetChats once the non-reading clients are gone")
			if _, is := m.(proto.GetChatsResponse); !is {
				ok = false
			}
			got = append(got, show(m))
		}
		if ok {
			return
		}
		c.nc.Close() // and what it holds is given back, before the next try
		awaitLogout(k, watcher, c)
	}
	k.Fatalf("every client that held queued history was reset, and its logout seen; then %d GetChats of %d bytes "+
		"each, as many as fit in the half of OutputBudget (%d bytes) that large replies may use, were refused in %d "+
		"tries out of %d:\n  got: %s\nthe budget leaked: every frame's bytes must be given back when it is written, "+
		"when the outbox discards it (a drop, a failed write) and when the connection ends%s", fit, frame, budget,
		tries, tries, strings.Join(got, "\n       "), c.context())
}

// awaitLogout reads the watcher's frames until c's 125.
func awaitLogout(k *testkit.T, watcher *client, c *client) {
	k.Helper()
	deadline := time.Now().Add(testkit.IOTimeout)
	for {
		m, err := watcher.read(deadline)
		if err != nil {
			k.Fatalf("%s closed its connection; the watcher heard no 125 for it within %v (%s)%s", c.who,
				testkit.IOTimeout, testkit.Describe(err), c.context())
		}
		if lo, ok := m.(proto.UserLogoutEvent); ok && lo.UserID == c.user.ID {
			return
		}
	}
}

// liveHeap is the server's live heap, in bytes, after a full collection.
func liveHeap() int {
	testkit.GC()
	var m runtime.MemStats
	testkit.ReadMemStats(&m)
	return int(m.HeapAlloc)
}
