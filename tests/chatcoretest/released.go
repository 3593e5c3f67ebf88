package chatcoretest

import (
	"bufio"
	"fmt"
	"net"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// releasedRounds is how many connections checkReleased opens, one after the
// other.
const releasedRounds = 300

// watcherRounds is how many of them one watcher follows: two presence events
// each (126, 125), well inside a receiver's burst of 100.
const watcherRounds = 30

// checkReleased: a connection that has gone leaves nothing behind. Its
// session ends and it leaves its channel's members (endSession), so that
// after many connections that log in, join a channel and go, the server holds
// what it held before them: no goroutine, no descriptor, no entry in a map.
func checkReleased(k *testkit.T, impl Impl) {
	k.Helper()
	e := start(k, impl, Config{})
	names := []string{"rl-ann", "rl-bob", "rl-cid"}
	users := map[string]proto.User{}
	for _, name := range names {
		c := e.dial(name)
		users[name] = c.register(name)
		c.nc.Close()
	}
	owner := e.login("rl-owner")
	// Channels are exercise 7.3's: without them, the rounds only log in.
	ch, channels := owner.tryCreateChannel("rl")
	// The watcher learns from each 125 that a connection's close has been
	// handled. Presence is budgeted per receiver (100 at once, then 20 a
	// second, 7.3's broadcastPresenceLocked), so a fresh watcher takes over
	// well before the budget runs out.
	watcher := e.dialUntracked("rl-watcher")
	watcher.settle()
	defer func() { watcher.nc.Close() }()
	k.CheckReleased(fmt.Sprintf("connections that each log in (as one of %q), join a channel (if there are "+
		"channels yet) and close", names),
		releasedRounds, testkit.Released{HeapPerRound: 128, HeapSlack: 64 << 10}, func(i int) {
			if i > 0 && i%watcherRounds == 0 {
				watcher.nc.Close()
				watcher = e.dialUntracked("rl-watcher")
				watcher.settle()
			}
			name := names[(i+len(names))%len(names)]
			c := e.dialUntracked(name)
			c.authenticate(name)
			if channels {
				c.join(ch.ID)
			}
			c.nc.Close()
			watcher.waitFor(fmt.Sprintf("connection %d of %d, logged in as %s, has closed", i+1, releasedRounds, name),
				proto.UserLogoutEvent{UserID: users[name].ID})
			watcher.backlog = nil
			owner.backlog = nil
		})
}

// dialUntracked opens a plain connection that the check closes itself: unlike
// e.dial, it registers nothing with the harness, which would keep every
// connection of a long run alive (and, under go test, in the heap measured).
func (e *env) dialUntracked(who string) *client {
	e.k.Helper()
	nc, err := net.DialTimeout("tcp", e.srv.Addr, testkit.IOTimeout)
	if err != nil {
		e.k.Fatalf("dial %s: %v", e.srv.Addr, err)
	}
	return &client{k: e.k, e: e, who: who, nc: nc, r: bufio.NewReader(nc)}
}

// tryCreateChannel creates a channel on c; it reports false, instead of
// failing, when the server answers that channels are not implemented yet.
func (c *client) tryCreateChannel(name string) (proto.Channel, bool) {
	c.k.Helper()
	m := c.call(proto.CreateChannelRequest{RequestID: c.id(), Name: name})
	if notImplemented(m) != "" {
		return proto.Channel{}, false
	}
	r, ok := m.(proto.CreateChannelResponse)
	if !ok || r.Channel.Name != name || r.Channel.ID == 0 {
		c.k.Fatalf("creating channel %q: want 108 {channel:{id, name:%q}, request_id}, got %s%s", name, name, show(m), c.context())
	}
	return r.Channel, true
}
