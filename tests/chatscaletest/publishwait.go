package chatscaletest

import (
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// othersNotHeldByPublish checks that a write waiting for the stream holds up
// no one else: while NATS is down, ann's message is retried for the whole
// publish timeout, and all that time ben, on the same server, is answered at
// once a request that needs no NATS (a WriteChat outside any channel: No
// channel joined.). A server that keeps its mutex (or any lock the other
// connections need) across the publish and its retries stops answering
// everyone for the publish timeout, at every outage.
func othersNotHeldByPublish(k *testkit.T, impl Impl) {
	k.Helper()
	n := startNATS(k)
	cfg := baseConfig(k, n.url())
	srv := serve(k, impl, "W", cfg)
	ann, ben := srv.dial("ann"), srv.dial("ben")
	ann.newUser("ann")
	ben.newUser("ben")
	ch := ann.createChannel("waiting")
	ann.join(ch.ID)

	n.stop()
	const content = "written while NATS is down"
	ann.send(proto.WriteChat{Content: content})
	start := time.Now()
	type answer struct {
		m   proto.Message
		err error
	}
	answered := make(chan answer, 1)
	go func() { // ann's answer (Message not stored.) ends the pings; ann is this goroutine's alone until then
		deadline := time.Now().Add(cfg.PublishTimeout + testkit.IOTimeout)
		for {
			m, err := ann.tryNext(time.Until(deadline))
			if err != nil || !isEvent(m) {
				answered <- answer{m, err}
				return
			}
		}
	}()

	slow := cfg.PublishTimeout / 2
	want := proto.Error{Value: proto.MsgNoChannel}
	ping := proto.WriteChat{Content: "ben is in no channel"}
	tick := time.NewTicker(50 * time.Millisecond) // paces ben's requests; each answer is waited for
	defer tick.Stop()
	pings := 0
	for {
		select {
		case a := <-answered:
			if a.err != nil {
				k.Fatalf("%s: a write while NATS is down\nsent: WriteChat %q\nwant: %s within the publish timeout (%v)\ngot:  no answer (%v)%s",
					ann.who, content, show(proto.Error{Value: msgNotStored}), cfg.PublishTimeout, a.err, ann.context())
			}
			if pings == 0 {
				k.Fatalf("%s: a write while NATS is down was answered %s after %v, before ben's first request: the write did not wait for the stream%s%s",
					ann.who, show(a.m), time.Since(start).Round(time.Millisecond), notImplemented(a.m), ann.context())
			}
			return
		case <-tick.C:
		}
		sent := time.Now()
		ben.send(ping)
		m, err := ben.tryNext(cfg.PublishTimeout + testkit.IOTimeout)
		for err == nil && isEvent(m) {
			m, err = ben.tryNext(cfg.PublishTimeout + testkit.IOTimeout)
		}
		took := time.Since(sent)
		if err != nil || m != want || took > slow {
			got := show(m)
			if err != nil {
				got = "nothing (" + err.Error() + ")"
			}
			k.Fatalf("%s: a request that needs no NATS, sent %v after ann (same server) wrote a message while NATS was down (retried until the publish timeout, %v)\n"+
				"sent: %s\nwant: %s at once (under %v)\ngot:  %s after %v\n"+
				"likely cause: the server's mutex (or another lock every connection takes) is held across the publish and its retries: while NATS is down every client of the server waits the publish timeout; publish with no lock held%s",
				ben.who, sent.Sub(start).Round(time.Millisecond), cfg.PublishTimeout, show(ping), show(want), slow, got, took.Round(time.Millisecond), ben.context())
		}
		pings++
	}
}
