package chatscaletest

import (
	"fmt"
	"strings"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// refusedAtOnce checks that a full stream's refusal is answered at once:
// the stream's "maximum bytes exceeded" is an answer, not an outage, and a
// retry cannot change it. A server that retries every error holds the
// writer the whole PublishTimeout before its 101; one that retries only
// while NATS is down answers in one round trip. The bound is
// PublishTimeout itself: a retrying server cannot answer before it, however
// quiet the machine, and a correct one is far inside it, however busy.
func refusedAtOnce(k *testkit.T, impl Impl) {
	k.Helper()
	n := startNATS(k)
	cfg := baseConfig(k, n.url())
	const budget = 16 << 10
	cfg.MaxStreamBytes = budget
	srv := serve(k, impl, "R", cfg)
	fay := srv.dial("fay")
	fay.newUser("fay")
	ch := fay.createChannel("refusing")
	fay.join(ch.ID)

	text := strings.Repeat("r", 6000)
	for i := 0; i < 2*budget/len(text); i++ {
		want := proto.ReceiveChat{ChannelID: ch.ID, Content: fmt.Sprintf("%03d %s", i, text), UserID: fay.user.ID}
		start := time.Now()
		fay.send(proto.WriteChat{Content: want.Content})
		got := fay.waitFor("the answer to a write into a stream that fills", func(m proto.Message) bool {
			_, isErr := m.(proto.Error)
			return isErr || m == want
		})
		took := time.Since(start)
		if got == want {
			continue
		}
		if got != (proto.Error{Value: msgNotStored}) {
			k.Fatalf("%s: a write of %d bytes into a stream of %d bytes (MaxStreamBytes)\nwant: the echo, or once it is full 101 %q\ngot:  %s%s%s",
				fay.who, len(want.Content), budget, msgNotStored, show(got), notImplemented(got), fay.context())
		}
		if took >= cfg.PublishTimeout {
			k.Fatalf("%s: a write into a full stream (MaxStreamBytes %d, NATS up)\nsent: WriteChat of %d bytes\nwant: 101 %q at once (one round trip)\ngot:  it after %v (PublishTimeout %v)\n"+
				"likely cause: the publish retries every error until PublishTimeout; retry only while NATS is unreachable (a try timed out, no responders, disconnected) — a stream's refusal is its answer",
				fay.who, budget, len(want.Content), msgNotStored, took.Round(time.Millisecond), cfg.PublishTimeout)
		}
		return
	}
	k.Fatalf("%s: %d writes of 6 KB into a stream of %d bytes (MaxStreamBytes) were all stored\nwant: 101 %q once it is full%s",
		fay.who, 2*budget/len(text), budget, msgNotStored, fay.context())
}
