package chatscaletest

import (
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// retriesPaced checks that a publish retried while the stream does not
// answer waits between its tries. The suite deletes the stream under a
// server that reaches NATS through the proxy: every try is answered at
// once ("no responders"), so a retry loop without a pause sends one try
// per round trip. The proxy counts the tries of the one write, and the
// bound is a rate — at most one try per 25 ms of the write's wait, plus
// two — so a busy machine, which slows a spinner's round trips, cannot
// hide it the way it hides a CPU count.
func retriesPaced(k *testkit.T, impl Impl) {
	k.Helper()
	n := startNATS(k)
	obs := observe(k, n.url())
	proxy := startAckDropper(k, n.url())
	cfg := baseConfig(k, proxy.url())
	srv := serve(k, impl, "P", cfg)
	joe := srv.dial("joe")
	joe.newUser("joe")
	ch := joe.createChannel("paced")
	joe.join(ch.ID)

	obs.deleteStream(streamName)
	const content = "written while the stream is gone"
	start := time.Now()
	joe.send(proto.WriteChat{Content: content})
	got := joe.waitFor("the answer to a write while the stream is gone", func(m proto.Message) bool {
		_, isErr := m.(proto.Error)
		r, isChat := m.(proto.ReceiveChat)
		return isErr || isChat && r.Content == content
	})
	took := time.Since(start)
	tries := 0
	for _, t := range proxy.seen() {
		if t.body.Content == content {
			tries++
		}
	}
	// A server started on the same NATS makes the stream again, as after a
	// wipe (wipedStream), before any verdict: a server whose stream is gone
	// may not close in time, and that is not this check's finding.
	serve(k, impl, "P2", baseConfig(k, n.url()))
	if limit := int(took/(25*time.Millisecond)) + 2; tries > limit {
		k.Fatalf("%s: a write while the suite had deleted the stream (each try answered at once: no responders)\nsent: WriteChat %q\nwant: tries paced, at most %d in the %v the answer took (one per 25 ms)\ngot:  %d tries, then %s\n"+
			"likely cause: the publish is retried without a pause; wait between tries (a timer, or the context's end)%s",
			joe.who, content, limit, took.Round(time.Millisecond), tries, show(got), joe.context())
	}
}
