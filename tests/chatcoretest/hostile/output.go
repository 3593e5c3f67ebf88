package hostile

import (
	"fmt"
	"strings"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// Output checks what a server may hold for a client: a history answer is
// one frame, what is queued for a client that does not read is bounded in
// BYTES, and what is queued for all clients together is bounded too. (Bounded in frames, 10 clients that asked for history and did
// not read held 529 MiB: 1,024 frames of up to 1 MiB each.)
func Output(k *testkit.T, start Start) {
	k.Helper()
	run(k, "outbox-bounded-in-bytes", func(k *testkit.T) { checkOutboxBytes(k, start) })
	run(k, "output-budget", func(k *testkit.T) { checkOutputBudget(k, start) })
	run(k, "history-reads-one-frame", func(k *testkit.T) { checkHistoryRead(k, start) })
}

// checkOutboxBytes: a channel holds ~1 MiB of history (64 messages of 16,000
// bytes). A reader's GetChats of 100,000 messages is answered with one frame
// of at most 1,000, newest last. Then a client that reads nothing (small
// socket buffers) sends such GetChats — 8 MiB more answers than the kernel's
// buffers and the bound hold together — and then a chat message, the
// marker, all in one write. With MaxPending 2 MiB it must be dropped: the
// watcher in the channel hears it log out (125), never the marker, which
// would mean all 40 answers were queued.
func checkOutboxBytes(k *testkit.T, start Start) {
	const pending, messages, size = 2<<20 + 64<<10, 64, 16000
	// Enough ~1 MiB answers to pass what the kernel's buffers and the bound
	// hold together, with room to spare.
	asks := (testkit.KernelBuffers()+pending)>>20 + 8
	addr := start(k, Limits{MaxPending: pending, WriteTimeout: time.Minute})
	writer := dial(k, addr, "a writer")
	writer.login("outbox-writer")
	ch := writer.createChannel("outbox")
	writer.join(ch.ID)
	for i := range messages - 1 { // sent at once: the server may store them in one batch
		writer.send(proto.WriteChat{Content: fmt.Sprintf("%02d", i) + strings.Repeat("x", size-2)})
	}
	writer.say(ch.ID, fmt.Sprintf("%02d", messages-1)+strings.Repeat("x", size-2))
	id := writer.id()
	m := writer.call(proto.GetChatsRequest{RequestID: id, ChannelID: ch.ID, Limit: 100000}, "GetChats of 100,000")
	r, ok := m.(proto.GetChatsResponse)
	if !ok || len(r.Messages) == 0 || len(r.Messages) > 1000 ||
		!strings.HasPrefix(r.Messages[len(r.Messages)-1].Content, fmt.Sprintf("%02d", messages-1)) {
		k.Fatalf("%s: GetChats with limit 100,000 of a channel of %d messages of %d bytes\n  want: 106 with the "+
			"newest that fit in one frame (at most 1,000), newest last\n   got: %s%s", writer.who, messages, size,
			show(m), writer.context())
	}

	nc := k.DialSmall(addr)
	sink := wrap(k, addr, nc, "a client that asks for history and reads nothing")
	sink.login("outbox-sink")
	sink.join(ch.ID)
	// All in one write, so that they arrive together: a server that drops
	// the client must not go on with what is already in its read buffer
	// (the marker among it).
	marker := fmt.Sprintf("the marker: all %d answers were queued", asks)
	var reqs []proto.Message
	for range asks {
		reqs = append(reqs, proto.GetChatsRequest{RequestID: sink.id(), ChannelID: ch.ID, Limit: messages})
	}
	sink.trySend(append(reqs, proto.WriteChat{Content: marker})...)
	// The server reads the store for each GetChats, one after the other,
	// before the drop: more than one IOTimeout on a busy machine.
	wait := 3 * testkit.IOTimeout
	deadline := time.Now().Add(wait)
	for {
		m, err := writer.read(deadline)
		if err != nil {
			k.Fatalf("%s sent %d GetChats of ~1 MiB each without reading, then a chat message. The watcher in the "+
				"channel heard neither its logout nor its message within %v (%s)%s", sink.who, asks,
				wait, testkit.Describe(err), sink.context())
		}
		switch m := m.(type) {
		case proto.UserLogoutEvent:
			if m.UserID == sink.user.ID {
				return // dropped: its outbox hit the bound
			}
		case proto.ReceiveChat:
			if m.UserID == sink.user.ID && m.Content == marker {
				k.Fatalf("%s sent %d GetChats whose answers are ~1 MiB each, then a chat message, in one write, "+
					"and read nothing; the message was delivered. Either the server queued all %d MiB for it — with "+
					"MaxPending %d it must drop the client once what is queued would pass that many BYTES (a bound "+
					"in frames holds 1,024 MiB of 1 MiB answers) — or it dropped the client and went on with the "+
					"requests already in its read buffer: stop the reader too%s", sink.who, asks, asks, pending,
					sink.context())
			}
		}
	}
}
