package hostile

import (
	"fmt"
	"strings"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// ChatFlood checks each user's budget of chat bytes (ChatBurst at once,
// ChatRate a second): one user who writes as fast as the connection goes
// is refused past it, while others write on. (Without one, a user filled
// chapter 08's 64 MiB stream in 6–8 s and every message of everyone was
// refused after; chapter 07's database grew without bound.) On chapter
// 08 the servers share one NATS: a reader on the other server sees exactly
// the messages that were stored.
func ChatFlood(k *testkit.T, start StartShared) {
	k.Helper()
	run(k, "chat-flood", func(k *testkit.T) { checkChatFlood(k, start) })
	run(k, "chat-frames", func(k *testkit.T) { checkChatFrames(k, start) })   // chatescaped.go
	run(k, "store-budget", func(k *testkit.T) { checkStoreBudget(k, start) }) // storebudget.go
}

// checkChatFlood: a flooder sends four bursts' worth of chat messages in
// one write. At least a burst's worth must be stored (echoed), at most what
// the burst and the rate allow in the time the answers took, and the rest
// refused 101 "Too many messages, try again later."; a user on the same
// server then writes at once, a reader on the other server has heard
// exactly the messages stored, and the flooder writes again once the rate
// has refilled its budget.
func checkChatFlood(k *testkit.T, start StartShared) {
	const (
		burst, rate = 64 << 10, 16 << 10
		size        = 4000
		flood       = 4 * burst / size
	)
	addrs := start(k, Limits{ChatBurst: burst, ChatRate: rate}, 2)
	flooder := dial(k, addrs[0], "a flooder (server 1)")
	flooder.login("flood-writer")
	ch := flooder.createChannel("flooded")
	flooder.join(ch.ID)
	reader := dial(k, addrs[len(addrs)-1], fmt.Sprintf("a reader of the flooded channel (server %d)", len(addrs)))
	reader.login("flood-reader")
	reader.join(ch.ID)
	calm := dial(k, addrs[0], "an honest user (server 1)")
	calm.login("flood-calm")
	quiet := calm.createChannel("quiet")
	calm.join(quiet.ID)

	msgs := make([]proto.Message, flood)
	for i := range msgs {
		msgs[i] = proto.WriteChat{Content: fmt.Sprintf("%03d", i) + strings.Repeat("f", size-3)}
	}
	sent := time.Now()
	if !flooder.trySend(msgs...) {
		k.Fatalf("%s: sending %d chat messages of %d bytes in one write failed: the server closed the connection%s",
			flooder.who, flood, size, flooder.context())
	}
	stored, refused := 0, 0
	deadline := time.Now().Add(testkit.IOTimeout)
	for stored+refused < flood {
		m, err := flooder.read(deadline)
		if err != nil {
			k.Fatalf("%s: %d chat messages of %d bytes sent at once (ChatBurst %d, ChatRate %d a second)\n"+
				"  want: an answer to each, its echo or 101 %q\n   got: %d echoes and %d refusals, then nothing (%s)%s",
				flooder.who, flood, size, burst, rate, proto.MsgTooManyMessages, stored, refused, testkit.Describe(err), flooder.context())
		}
		switch m := m.(type) {
		case proto.ReceiveChat:
			if m.UserID == flooder.user.ID {
				stored++
			}
		case proto.Error:
			if m.Value != proto.MsgTooManyMessages {
				k.Fatalf("%s: chat message %d of %d sent at once (%d bytes each; ChatBurst %d)\n  want: its echo, or 101 %q\n   got: %s%s",
					flooder.who, stored+refused+1, flood, size, burst, proto.MsgTooManyMessages, show(m), flooder.context())
			}
			refused++
		}
	}
	took := time.Since(sent)
	most := int((burst+rate*took.Seconds())/size) + 1
	if stored < burst/size || stored > most || refused == 0 {
		k.Fatalf("%s: %d chat messages of %d bytes sent at once, answered within %v (ChatBurst %d at once, ChatRate %d a second)\n"+
			"  want: between %d (one burst) and %d (the burst and what the rate refilled meanwhile) stored, the others refused 101 %q\n"+
			"   got: %d stored (echoed), %d refused\n"+
			"  (likely cause: no budget of chat bytes per user, or one that is not counted in bytes, or not refilled at its rate)%s",
			flooder.who, flood, size, took.Round(time.Millisecond), burst, rate, burst/size, most, proto.MsgTooManyMessages,
			stored, refused, flooder.context())
	}

	// Another user's budget is their own: a long message (a second of the
	// rate) passes at once.
	calm.say(quiet.ID, "calm after the flood "+strings.Repeat("c", 16000))

	// The flooder writes again once the rate has refilled its budget; the
	// reader has heard the stored messages, and no refused one, before it.
	marker := "after the flood " + strings.Repeat("m", size)
	tick := time.NewTicker(100 * time.Millisecond) // paces the tries; the echo is what is waited for
	defer tick.Stop()
	deadline = time.Now().Add(testkit.IOTimeout)
	for again := false; !again; {
		flooder.send(proto.WriteChat{Content: marker})
		m, err := flooder.read(deadline)
		for err == nil && !isChatAnswer(m, flooder.user.ID) {
			m, err = flooder.read(deadline)
		}
		switch {
		case err != nil:
			k.Fatalf("%s: a chat message of %d bytes after the flood: no answer within %v (%s)%s",
				flooder.who, len(marker), testkit.IOTimeout, testkit.Describe(err), flooder.context())
		case m == proto.Message(proto.ReceiveChat{ChannelID: ch.ID, Content: marker, UserID: flooder.user.ID}):
			again = true
		case m != proto.Message(proto.Error{Value: proto.MsgTooManyMessages}) || time.Now().After(deadline):
			k.Fatalf("%s: a chat message of %d bytes after the flood, tried every 100 ms (ChatRate %d bytes a second refills the budget)\n"+
				"  want: its echo within %v (101 %q until then)\n   got: %s%s",
				flooder.who, len(marker), rate, testkit.IOTimeout, proto.MsgTooManyMessages, show(m), flooder.context())
		default:
			<-tick.C
		}
	}
	heard := 0
	deadline = time.Now().Add(testkit.IOTimeout)
	for {
		m, err := reader.read(deadline)
		if err != nil {
			k.Fatalf("%s: the flooder's marker after the flood never came within %v (%s); %d of its flood messages came before%s",
				reader.who, testkit.IOTimeout, testkit.Describe(err), heard, reader.context())
		}
		r, ok := m.(proto.ReceiveChat)
		if !ok || r.UserID != flooder.user.ID {
			continue
		}
		if r.Content == marker {
			break
		}
		heard++
	}
	if heard != stored {
		k.Fatalf("%s: the flooder's %d chat messages sent at once: %d echoed to it, %d refused\n"+
			"  want: the %d echoed, and no other, delivered to the channel's other member\n   got: %d delivered\n"+
			"  (likely cause: a refused message stored or sent all the same, or the refusal given after the store)%s",
			reader.who, flood, stored, refused, stored, heard, reader.context())
	}
}

// isChatAnswer reports whether m answers a chat message of user: its echo
// or a 101 (events are not).
func isChatAnswer(m proto.Message, user uint32) bool {
	switch m := m.(type) {
	case proto.ReceiveChat:
		return m.UserID == user
	case proto.Error:
		return true
	}
	return false
}
