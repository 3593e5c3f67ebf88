package hostile

import (
	"strings"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// checkChatFrames: the chat budget counts what a message costs on the wire
// and in the store, its encoded frame, not its content's bytes. Counting
// the content, 4000 control characters (6 bytes each as JSON) cost 4000
// bytes of budget and took 24 KB of every frame sent and of the store
// (attacker5's F1/F8: one user's budget became 6× the bytes stored), and
// an empty message cost nothing (F5: 140,685 stored in 10 s by four users
// on chapter 08, 24,509 by one on 07). Each of two users sends four
// bursts' worth at once, one of escaped content and one of empty
// messages; the frames of the messages stored (echoed) must fit in the
// burst and what the rate refilled meanwhile, and the rest be refused.
func checkChatFrames(k *testkit.T, start StartShared) {
	const burst, rate = 64 << 10, 16 << 10
	addrs := start(k, Limits{ChatBurst: burst, ChatRate: rate}, 2)
	for _, c := range []struct {
		name, content string
		n             int
	}{
		{"escaped", strings.Repeat("\x01", 4000), 4 * burst / 4000},
		{"empty", "", 4 * burst / 64},
	} {
		w := dial(k, addrs[0], "a writer of "+c.name+" chat messages (server 1)")
		w.login("frames-" + c.name)
		ch := w.createChannel("frames-" + c.name)
		w.join(ch.ID)
		frame, err := proto.Encode(proto.ReceiveChat{ChannelID: ch.ID, Content: c.content, UserID: w.user.ID})
		if err != nil {
			k.Fatalf("encoding a 103: %v", err)
		}
		msgs := make([]proto.Message, c.n)
		for i := range msgs {
			msgs[i] = proto.WriteChat{Content: c.content}
		}
		sent := time.Now()
		if !w.trySend(msgs...) {
			k.Fatalf("%s: sending %d chat messages of %d bytes in one write failed: the server closed the connection%s",
				w.who, c.n, len(c.content), w.context())
		}
		stored, refused := 0, 0
		deadline := time.Now().Add(testkit.IOTimeout)
		for stored+refused < c.n {
			m, err := w.read(deadline)
			// Each answer is a durable write: a server slowed by a busy
			// machine gets IOTimeout per answer, not for all of them.
			deadline = time.Now().Add(testkit.IOTimeout)
			if err != nil {
				k.Fatalf("%s: %d chat messages of %d bytes sent at once (ChatBurst %d, ChatRate %d a second)\n"+
					"  want: an answer to each, its echo or 101 %q\n   got: %d echoes and %d refusals, then nothing (%s)%s",
					w.who, c.n, len(c.content), burst, rate, proto.MsgTooManyMessages, stored, refused, testkit.Describe(err), w.context())
			}
			switch m := m.(type) {
			case proto.ReceiveChat:
				if m.UserID == w.user.ID {
					stored++
				}
			case proto.Error:
				refused++
			}
		}
		took := time.Since(sent)
		most := int((burst+rate*took.Seconds())/float64(len(frame))) + 1
		// A server slow enough for the rate to refill the budget of every
		// message may refuse none; otherwise some must be refused.
		if stored > most || (refused == 0 && most < c.n) {
			k.Fatalf("%s: %d chat messages of %d bytes of content sent at once, each a %d-byte frame (103) when sent and about as much stored; answered within %v (ChatBurst %d, ChatRate %d a second)\n"+
				"  want: at most %d stored (echoed: their frames fit in the burst and what the rate refilled meanwhile), the others refused 101 %q\n"+
				"   got: %d stored, %d refused (%d bytes of frames)\n"+
				"  (likely cause: the budget counts the content's bytes, not the encoded frame's: JSON escapes a control character as 6 bytes, and an empty message costs its frame all the same)%s",
				w.who, c.n, len(c.content), len(frame), took.Round(time.Millisecond), burst, rate, most, proto.MsgTooManyMessages,
				stored, refused, stored*len(frame), w.context())
		}
	}
}
