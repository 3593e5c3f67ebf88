package hostile

import (
	"fmt"
	"strings"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// msgNotStored is the answer to a chat message that was not stored, in
// every chapter: a full store (07's MaxStoreBytes, 08's stream budget), a
// failed transaction or publish.
const msgNotStored = "Message not stored."

// checkStoreBudget: with the store's budget small (MaxStoreBytes: 07's
// database, 08's stream), a user writes chat messages of storeMsg bytes
// until one is refused. The refusal must come within twice the budget's
// worth of writes, and be 101 "Message not stored.": a defined answer that
// says what happened. Then it must be true: the channel's history ends with
// the last message echoed, the refused one nowhere in it; and another user
// still registers, logs in and makes a channel (the budget is the
// messages'). 64 users of one address stored 130 MB in chapter 07 in 22 s
// before it had a budget (attacker5's F4).
func checkStoreBudget(k *testkit.T, start StartShared) {
	const budget, size = 128 << 10, 6000
	addr := start(k, Limits{MaxStoreBytes: budget}, 1)[0]
	w := dial(k, addr, "a writer")
	w.login("store-writer")
	ch := w.createChannel("store-filling")
	w.join(ch.ID)
	last, refused := "", ""
	for i := 0; i < 2*budget/size && refused == ""; i++ {
		content := fmt.Sprintf("%03d ", i) + strings.Repeat("s", size-4)
		w.send(proto.WriteChat{Content: content})
		deadline := time.Now().Add(testkit.IOTimeout)
	read:
		for {
			m, err := w.read(deadline)
			if err != nil {
				k.Fatalf("%s: no answer to chat message %d of %d bytes (MaxStoreBytes %d) within %v (%s)%s", w.who,
					i, size, budget, testkit.IOTimeout, testkit.Describe(err), w.context())
			}
			switch m := m.(type) {
			case proto.ReceiveChat:
				if m.UserID == w.user.ID && m.Content == content {
					last = content
					break read
				}
			case proto.Error:
				if m.Value != msgNotStored {
					k.Fatalf("%s: chat message %d of %d bytes into a store of %d bytes (MaxStoreBytes)\n  want: "+
						"its echo, or once the store is full 101 %q\n   got: %s%s", w.who, i, size, budget,
						msgNotStored, show(m), w.context())
				}
				refused = content
				break read
			}
		}
	}
	if refused == "" {
		k.Fatalf("%s: wrote %d chat messages of %d bytes (%d KiB) with the store's budget at %d KiB "+
			"(MaxStoreBytes), and every one was stored\n  want: 101 %q once the budget is spent\n   got: "+
			"no refusal. A store needs a byte budget and a defined answer when it is full%s", w.who, 2*budget/size,
			size, 2*budget/size*size>>10, budget>>10, msgNotStored, w.context())
	}
	id := w.id()
	m := w.call(proto.GetChatsRequest{RequestID: id, ChannelID: ch.ID, Limit: 1000}, "the history of a full store")
	// GetChats may be a later exercise's stub (chapter 08: 8.3): the
	// budget is this check's, the history that exercise's to show.
	if !stub(m) {
		h, ok := m.(proto.GetChatsResponse)
		if !ok {
			k.Fatalf("%s: GetChats once the store is full\n  want: 106\n   got: %s%s", w.who, show(m), w.context())
		}
		for _, msg := range h.Messages {
			if msg.Content == refused {
				k.Fatalf("%s: a chat message answered 101 %q is in the channel's history (%d messages): \"not "+
					"stored\" must mean not stored%s", w.who, msgNotStored, len(h.Messages), w.context())
			}
		}
		if n := len(h.Messages); last != "" && (n == 0 || h.Messages[n-1].Content != last) {
			k.Fatalf("%s: the history of a full store (%d messages) does not end with the last message echoed "+
				"(%.4q...)%s", w.who, n, last, w.context())
		}
	}
	other := dial(k, addr, "another user, once the store is full")
	other.login("store-other")
	other.createChannel("made-with-the-store-full")
}
