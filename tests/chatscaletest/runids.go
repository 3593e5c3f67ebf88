package chatscaletest

import (
	"strings"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// idsPerRun checks that a message id names the run of the server that sent
// it, not only a count: the stream drops, for two minutes, a message whose
// id it has seen, and a server restarted (a new process, a deploy, a crash)
// counts from the start again. A counter alone — or a user's id and a
// counter — repeats the last run's ids, and the new run's messages are
// acknowledged as duplicates of the old ones and never delivered, without
// an error.
//
// The suite runs every server in one process, where a counter kept outside
// the server goes on across a restart, so the repeat itself cannot happen
// here. What is checked is what makes it impossible: the ids of two runs of
// one server (closed and started again on its DBPath) differ in more than
// their trailing number, the count.
func idsPerRun(k *testkit.T, impl Impl) {
	k.Helper()
	n := startNATS(k)
	obs := observe(k, n.url())
	srv := serve(k, impl, "R", baseConfig(k, n.url()))
	amy := srv.dial("amy")
	amy.newUser("amy")
	ch := amy.createChannel("runs")
	amy.join(ch.ID)
	write := func(c *client, content string) {
		k.Helper()
		c.send(proto.WriteChat{Content: content})
		c.expectChats("the echo of one's own message", []proto.ReceiveChat{{ChannelID: ch.ID, Content: content, UserID: c.user.ID}})
	}
	write(amy, "first run 1")
	write(amy, "first run 2")
	srv.restart()
	again := srv.dial("amy after R restarted")
	loginEventually(k, again, "amy", "server R was closed and started again on its DBPath")
	again.join(ch.ID)
	write(again, "second run 1")
	write(again, "second run 2")

	ids := map[string]string{}
	for _, m := range obs.messages(ch.ID) {
		ids[m.body.Content] = m.msgID
	}
	first := []string{ids["first run 1"], ids["first run 2"]}
	second := []string{ids["second run 1"], ids["second run 2"]}
	for _, a := range first {
		for _, b := range second {
			if a == "" || b == "" || runPart(a) == runPart(b) {
				k.Fatalf("server R, closed and started again on its DBPath, wrote two messages in each run\nsent: WriteChat \"first run 1\", \"first run 2\" | restart | \"second run 1\", \"second run 2\"\n"+
					"want: message ids that name the run (e.g. an id made at start, as nuid.Next(), and a count): the stream drops for two minutes a message whose id it has seen\n"+
					"got:  ids %q in the first run, %q in the second (Nats-Msg-Id): the same but for the trailing count\n"+
					"likely cause: the id is a counter (or a user and a counter) with nothing of the run in it: a server started again in a new process counts from 1 again, and the stream acknowledges its messages as duplicates of the last run's and stores none of them — no echo, no error%s",
					first, second, again.context())
			}
		}
	}
}

// runPart is an id without its trailing number: what is left when the
// count of a server's messages is taken off.
func runPart(id string) string { return strings.TrimRight(id, "0123456789") }
