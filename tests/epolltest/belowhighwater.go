//go:build linux

package epolltest

import (
	"time"

	"serverlab/tests/testkit"
)

// checkReadsBelowHighWater: output waiting for a client stops the loop
// reading from it only at HighWater. Below it the connection is read as
// usual, so a client that pipelines across several writes without reading
// its replies yet is served until it has HighWater bytes waiting. Both ends
// have small socket buffers; the reply to "a" is twice what they can hold,
// and an eighth of HighWater: it stays queued. The client then sends "b" in
// a second write; another client's lines, sent after it, must soon find
// it answered. A loop that pauses a connection whenever a write leaves output
// queued (not only at HighWater) leaves "b" unread until the client reads.
func checkReadsBelowHighWater(k *testkit.T, impl Impl) {
	k.Helper()
	repeat := 2 * testkit.SmallAbsorption
	reply := len("0 ") + repeat + len("\n") // the reply to "a": "0 ", repeat × "a", "\n"
	highWater := 8 * reply
	srv := newEchoOn(k, impl, EchoConfig{Repeat: repeat, Limits: Limits{HighWater: highWater, MaxPending: 1 << 30,
		StallTimeout: time.Hour}}, k.ListenSmall())
	c := k.DialSmall(srv.Addr)
	send := func(line string) {
		c.SetWriteDeadline(time.Now().Add(testkit.IOTimeout))
		if _, err := c.Write([]byte(line + "\n")); err != nil {
			k.Fatalf("sending %q to the echo server: %s", line, testkit.Describe(err))
		}
	}
	other := k.Dial(srv)
	// Epoll reports a line of c soon, not necessarily before a line the
	// other client sends after it: the other client sends "y" until its
	// count shows all of c's lines answered (the count is of the lines
	// answered before, from both clients).
	probes := 0
	await := func(lines int, what string) {
		k.Helper()
		deadline := time.Now().Add(testkit.IOTimeout / 4)
		for {
			probes++
			n := echoTrip(k, other, repeat, "y")
			if n == probes-1+lines {
				return
			}
			if time.Now().After(deadline) {
				k.Fatalf("HighWater %d bytes. A client sent %s, reading nothing: the reply to \"a\" (%d bytes, more "+
					"than the socket buffers take, an eighth of HighWater) stays queued; another client then sent "+
					"\"y\", %d times in all, until %v had passed\n  want: a count that shows the first client's %d "+
					"lines answered (%d for the last y)\n   got: counted %d\nhint: reading stops at HighWater "+
					"(limit pauses a connection only when its queue reaches Options.HighWater), not whenever a write "+
					"leaves output queued: below it a pipelining client is served as usual%s", highWater, what, reply,
					probes, testkit.IOTimeout/4, lines, probes-1+lines, n, other.Context())
			}
		}
	}
	send("a")
	await(1, `"a"`)
	send("b")
	await(2, `"a", then "b" in a second write`)
}
