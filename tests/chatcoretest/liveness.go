package chatcoretest

import (
	"testing"
	"time"

	"serverlab/tests/chatcoretest/hostile"
	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// Liveness checks exercise 7.6: connections that stop talking are found
// and logged out, and the heartbeat (130 → 131) that the course adds. An
// unauthenticated connection has LoginTimeout to log in; a connection that
// has sent a heartbeat is held to IdleTimeout; a frame once begun must be
// complete within IdleTimeout; a logged-in connection that never sent a
// heartbeat (the original's clients) is not cut off for being quiet. The
// original kept every silent connection for ever.
func Liveness(t *testing.T, impl Impl) {
	k := testkit.New(t, "7.6")
	// Short, to keep the check fast, but with room for a busy machine: a
	// login (two requests) must fit in loginTimeout.
	const loginTimeout, timeout = time.Second, 600 * time.Millisecond
	e := start(k, impl, Config{LoginTimeout: loginTimeout, IdleTimeout: timeout})

	check(k, e, "heartbeat-answered", func(k *testkit.T, e *env) {
		c := e.dial("client")
		c.callExpect("a heartbeat, before login", proto.HeartbeatRequest{RequestID: 77}, proto.HeartbeatResponse{RequestID: 77})
	})

	check(k, e, "login-timeout", func(k *testkit.T, e *env) {
		quiet := e.dial("a connection that says nothing")
		pinger := e.dial("a connection that only sends heartbeats")
		stop := time.Now().Add(3 * loginTimeout)
		for time.Now().Before(stop) && !pinger.closedNow() {
			pinger.send(proto.HeartbeatRequest{RequestID: pinger.id()})
			pause(timeout / 4)
		}
		quiet.expectClosed("a connection that does not log in within LoginTimeout (1s) is closed, "+
			"so that idle connections cannot hold file descriptors for ever", testkit.IOTimeout)
		pinger.expectClosed("heartbeats do not extend the login timeout", testkit.IOTimeout, proto.TypeHeartbeatResponse)
	})

	check(k, e, "silent-heartbeat-client-logged-out", func(k *testkit.T, e *env) {
		watcher := e.login("lv-watcher")
		a := e.login("lv-silent")
		a.callExpect("a heartbeat", proto.HeartbeatRequest{RequestID: 1}, proto.HeartbeatResponse{RequestID: 1})
		watcher.waitFor("a client that promised heartbeats and fell silent for IdleTimeout (600ms) is logged out "+
			"(the original kept it logged in until it restarted)", proto.UserLogoutEvent{UserID: a.user.ID})
		a.expectClosed("and its connection is closed", testkit.IOTimeout, proto.TypeUserLoginEvent)
	})

	check(k, e, "heartbeats-keep-it", func(k *testkit.T, e *env) {
		a := e.login("lv-beating")
		stop := time.Now().Add(3 * timeout)
		for time.Now().Before(stop) {
			a.callExpect("a client that sends a heartbeat every 150ms stays connected",
				proto.HeartbeatRequest{RequestID: 5}, proto.HeartbeatResponse{RequestID: 5})
			pause(timeout / 4)
		}
	})

	check(k, e, "quiet-original-client-kept", func(k *testkit.T, e *env) {
		a := e.login("lv-quiet")
		pause(3 * timeout)
		a.expectAnswer("a logged-in client that never sent a heartbeat (as the original's clients) is not "+
			"cut off for being quiet; TCP keep-alive finds it if it is gone", a.sendGetChannels())
	})

	check(k, e, "logout-restarts-login-timeout", func(k *testkit.T, e *env) {
		checkLogoutRestartsLoginTimeout(k, e, loginTimeout)
	})
	check(k, e, "keep-alive", func(k *testkit.T, _ *env) { checkKeepAlive(k, impl) })

	check(k, e, "partial-frame-closed", func(k *testkit.T, e *env) {
		a := e.login("lv-partial")
		f, _ := proto.Encode(proto.GetChannelsRequest{RequestID: 1})
		a.write(f[:6], "the first 6 bytes of a frame")
		a.expectClosed("a frame that does not arrive whole within IdleTimeout (600ms) closes the connection "+
			"(the original waited for ever: a slowloris holds a connection with one byte)", testkit.IOTimeout)
	})

	connectionLimits(k, impl, e)
	hostile.Connections(k, hostileStart(impl))
}

// pause waits for d: these checks are about time passing, not about
// synchronising with the server.
func pause(d time.Duration) { <-time.After(d) }

// closedNow reports whether the server has closed the connection, reading
// what is there without waiting.
func (c *client) closedNow() bool {
	c.nc.SetReadDeadline(time.Now().Add(time.Millisecond))
	for {
		m, err := proto.Read(c.r)
		if err != nil {
			return !isTimeout(err)
		}
		c.backlog = append(c.backlog, m)
	}
}
