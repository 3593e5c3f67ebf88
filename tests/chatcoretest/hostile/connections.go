package hostile

import (
	"fmt"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// Connections checks what a server refuses to connections before they
// have proved anything: they must log in within LoginTimeout; a started
// frame must arrive whole within IdleTimeout; a frame over 1 MiB is refused;
// large frames draw on budgets, one for strangers and one for everyone; one
// address may hold MaxConnsPerAddress connections; and a few addresses
// cannot fill the server between them.
func Connections(k *testkit.T, start Start) {
	k.Helper()
	run(k, "pre-auth-deadline", func(k *testkit.T) { checkPreAuthDeadline(k, start) })
	run(k, "frame-too-large", func(k *testkit.T) { checkFrameTooLarge(k, start) })
	run(k, "last-words", func(k *testkit.T) { checkLastWords(k, start) }) // lastwords.go
	run(k, "large-frame-budgets", func(k *testkit.T) { checkFrameBudgets(k, start) })
	run(k, "connection-cap", func(k *testkit.T) { checkGlobalCap(k, start) })
	run(k, "connections-per-address", func(k *testkit.T) { checkAddressCap(k, start) })
	run(k, "fair-at-the-global-cap", func(k *testkit.T) { checkFairCap(k, start) })
}

// checkPreAuthDeadline: three connections that never log in — one silent,
// one that only sends heartbeats, one that stops in the middle of a frame
// (a slowloris) — are all closed within LoginTimeout + IdleTimeout, while a
// client that logged in goes on. 5,000 idle connections that never logged
// in were never closed by chapter 08's first server.
func checkPreAuthDeadline(k *testkit.T, start Start) {
	const login, idle = 800 * time.Millisecond, 800 * time.Millisecond
	addr := start(k, Limits{LoginTimeout: login, IdleTimeout: idle})
	member := dial(k, addr, "a client that logs in")
	member.login("pre-auth-member")
	began := time.Now()
	silent := dial(k, addr, "a connection that says nothing")
	pinger := dial(k, addr, "a connection that sends only heartbeats")
	loris := dial(k, addr, "a connection that stops in the middle of a frame")
	head, _ := frameHead(200, int(proto.TypeGetChannelsRequest), `{"request_id":1}`, 10)
	loris.write(head, "the header of a 200-byte frame and 10 bytes of it")
	deadline := began.Add(login + idle + testkit.IOTimeout)
	for time.Now().Before(began.Add(login + login/2)) {
		pinger.send(proto.HeartbeatRequest{RequestID: pinger.id()})
		if pinger.closedWithin(time.Now().Add(login / 4)) {
			break
		}
	}
	for _, c := range []*client{silent, pinger, loris} {
		if !c.closedWithin(deadline) {
			k.Fatalf("%s: still open %v after it connected, with LoginTimeout %v and IdleTimeout %v: a "+
				"connection that has not logged in is closed at LoginTimeout (heartbeats do not extend it), and a "+
				"started frame must be whole within IdleTimeout — otherwise idle strangers hold descriptors and "+
				"memory for ever%s", c.who, time.Since(began).Round(time.Millisecond), login, idle, c.context())
		}
	}
	id := member.id()
	member.expect("a client that logged in is not held to LoginTimeout",
		proto.HeartbeatRequest{RequestID: id}, proto.HeartbeatResponse{RequestID: id})
}

// checkFrameTooLarge: a header announcing 1 MiB + 1 is answered Frame too
// large. and the connection closed, before the body is read.
func checkFrameTooLarge(k *testkit.T, start Start) {
	addr := start(k, Limits{})
	c := dial(k, addr, "a stranger")
	head, _ := frameHead(proto.MaxFrame+1, int(proto.TypeGetChannelsRequest), `{"request_id":1}`, 0)
	c.write(head, "the header of a frame of 1 MiB + 1 byte")
	m, err := c.read(time.Now().Add(testkit.IOTimeout))
	if want := (proto.Error{Value: proto.MsgFrameTooLarge}); err != nil || m != want {
		k.Fatalf("%s: a frame header announcing %d bytes (the limit is %d)\n  want: %s, then the connection closed\n"+
			"   got: %s (%s)%s", c.who, proto.MaxFrame+1, proto.MaxFrame, show(want), show(m), testkit.Describe(err), c.context())
	}
	if !c.closedWithin(time.Now().Add(testkit.IOTimeout)) {
		k.Fatalf("%s: after Frame too large. the connection must be closed (its next bytes are not a frame)%s",
			c.who, c.context())
	}
}

// checkFrameBudgets: connections that begin 1 MiB frames and send them
// slowly must not hold more than the budgets. Five strangers each begin one
// with PreAuthBudget 3 MiB: at least two are told Server busy. and closed.
// Then seven logged-in clients each begin one with InputBudget 5 MiB: at
// least two of them too — logging in is free, so it buys no memory. Small
// frames are not budgeted: a login goes through meanwhile. (600 partial
// 1 MiB frames took a server from 20 MiB to 677 MiB.)
func checkFrameBudgets(k *testkit.T, start Start) {
	const mib = 1 << 20
	const preAuth, all = 3*mib + 1000, 5*mib + 1000
	addr := start(k, Limits{PreAuthBudget: preAuth, InputBudget: all, LoginTimeout: time.Minute})
	var members []*client
	for i := range 7 { // logged in first: their logins are not what is measured
		c := dial(k, addr, fmt.Sprintf("member %d", i+1))
		c.login(fmt.Sprintf("budget-member-%d", i+1))
		members = append(members, c)
	}
	var strangers []*client
	for i := range 5 {
		strangers = append(strangers, dial(k, addr, fmt.Sprintf("stranger %d", i+1)))
	}
	holders := beginLargeFrames(k, strangers, 5-preAuth/mib,
		fmt.Sprintf("5 connections that have not logged in each began a 1 MiB frame and sent 10 bytes of it; "+
			"PreAuthBudget is %d bytes", preAuth))
	late := dial(k, addr, "a client that logs in while strangers hold the budget")
	late.login("budget-late")
	for _, c := range holders {
		c.nc.Close() // gives the strangers' budget back
	}
	beginLargeFrames(k, members, 7-all/mib,
		fmt.Sprintf("7 logged-in clients each began a 1 MiB frame and sent 10 bytes of it; InputBudget is %d "+
			"bytes (and the strangers' frames, closed just before, may still count)", all))
}

// beginLargeFrames makes each client begin a 1 MiB GetChannels and send
// 10 bytes of it, then waits until at least refused of them are told
// Server busy. and closed. It returns the others, which hold their frames.
func beginLargeFrames(k *testkit.T, cs []*client, refused int, what string) []*client {
	k.Helper()
	head, _ := frameHead(proto.MaxFrame, int(proto.TypeGetChannelsRequest), `{"request_id":7}`, 10)
	for _, c := range cs {
		c.write(head, "the header of a 1 MiB frame and 10 bytes of it")
	}
	type verdict struct {
		c    *client
		busy bool
	}
	answers := make(chan verdict, len(cs))
	deadline := time.Now().Add(testkit.IOTimeout)
	for _, c := range cs {
		go func() {
			answers <- verdict{c, c.refusedWithin(deadline, proto.MsgServerBusy)}
		}()
	}
	var held []*client
	busy := 0
	for range cs {
		v := <-answers
		if v.busy {
			busy++
		} else {
			held = append(held, v.c)
		}
		if busy == refused { // enough: stop the waits of the rest
			for _, c := range cs {
				c.halt() // an event read after a plain past deadline would renew the wait
			}
		}
	}
	for _, c := range cs {
		c.resume()
	}
	if busy < refused {
		k.Fatalf("%s.\n  want: at least %d of them told 101 %q and closed before their bodies are read "+
			"(the rest do not fit)\n   got: %d within %v.\nReserve a large frame's size from the budget before "+
			"reading its body, and refuse the frame that does not fit", what, refused, proto.MsgServerBusy, busy,
			testkit.IOTimeout)
	}
	return held
}

// checkAddressCap: with MaxConnsPerAddress 3, a fourth connection from
// 127.0.0.2 is told Too many connections from your address. and closed; one
// from 127.0.0.3 is served; once one of the three closes, 127.0.0.2 may
// connect again.
func checkAddressCap(k *testkit.T, start Start) {
	const cap = 3
	addr := start(k, Limits{MaxConnsPerAddress: cap, LoginTimeout: time.Minute})
	needAddresses(k, addr, "127.0.0.2", "127.0.0.3")
	var open []*client
	for i := range cap {
		c := servedFrom(k, addr, "127.0.0.2", fmt.Sprintf("connection %d of %d", i+1, cap))
		open = append(open, c)
	}
	over, _ := dialFrom(k, addr, "127.0.0.2", fmt.Sprintf("connection %d (MaxConnsPerAddress %d)", cap+1, cap))
	if ok, why := over.served(); ok || why != proto.MsgTooManyFromAddr {
		k.Fatalf("%s: want 101 %q, then closed; got served %v, %q%s", over.who, proto.MsgTooManyFromAddr, ok, why,
			over.context())
	}
	servedFrom(k, addr, "127.0.0.3", "a connection from another address, while 127.0.0.2 is at its cap")
	open[0].nc.Close()
	servedFrom(k, addr, "127.0.0.2", "a connection after one of the three closed")
}

// checkGlobalCap: with MaxConnections 3, a fourth connection is told
// Server busy. and closed (NATS: 'maximum connections exceeded'); once one
// of the three closes, a new one is served.
func checkGlobalCap(k *testkit.T, start Start) {
	const cap = 3
	addr := start(k, Limits{MaxConnections: cap, LoginTimeout: time.Minute})
	var open []*client
	for i := range cap {
		open = append(open, servedFrom(k, addr, "127.0.0.1", fmt.Sprintf("connection %d of %d", i+1, cap)))
	}
	over := dial(k, addr, fmt.Sprintf("connection %d (MaxConnections %d)", cap+1, cap))
	if ok, why := over.served(); ok || why != proto.MsgServerBusy {
		k.Fatalf("%s: want 101 %q, then closed: the descriptors are the server's to keep; got served %v, %q%s",
			over.who, proto.MsgServerBusy, ok, why, over.context())
	}
	if !over.closedWithin(time.Now().Add(testkit.IOTimeout)) {
		k.Fatalf("%s: after the refusal the connection must be closed%s", over.who, over.context())
	}
	open[0].nc.Close()
	servedFrom(k, addr, "127.0.0.1", "a connection after one of the three closed")
}

// servedFrom dials from ip until a connection is served, within IOTimeout:
// a connection that just closed may still be counted for a moment.
func servedFrom(k *testkit.T, addr, ip, who string) *client {
	k.Helper()
	deadline := time.Now().Add(testkit.IOTimeout)
	for {
		c, _ := dialFrom(k, addr, ip, who)
		ok, why := c.served()
		if ok {
			return c
		}
		c.nc.Close()
		if time.Now().After(deadline) {
			k.Fatalf("%s must be served; it was refused: %q%s", c.who, why, c.context())
		}
		time.Sleep(10 * time.Millisecond) // a retry's pause, not a synchronisation
	}
}

// checkFairCap: with MaxConnections 24 and MaxConnsPerAddress 8, three
// addresses each open 8 connections (24: the whole server) and keep them.
// Honest clients from three more addresses must still be served: near the
// global cap, an address that holds many connections gets no more, and the
// last places are kept for addresses that hold a few (the server may do
// it another way, but it must do it: 9 addresses × 512 idle connections
// filled the default cap of 4,096 and locked every honest user out).
func checkFairCap(k *testkit.T, start Start) {
	const total, perAddr, attackers, honest = 24, 8, 3, 3
	addr := start(k, Limits{MaxConnections: total, MaxConnsPerAddress: perAddr, LoginTimeout: time.Minute})
	var ips []string
	for i := range attackers + honest {
		ips = append(ips, fmt.Sprintf("127.0.0.%d", i+2))
	}
	needAddresses(k, addr, ips...)
	taken := 0
	for _, ip := range ips[:attackers] {
		for i := range perAddr {
			c, _ := dialFrom(k, addr, ip, fmt.Sprintf("attacker connection %d", i+1))
			if ok, _ := c.served(); ok {
				taken++
			} else {
				c.nc.Close()
			}
		}
	}
	for _, ip := range ips[attackers:] {
		c, _ := dialFrom(k, addr, ip, "an honest client")
		if ok, why := c.served(); !ok {
			k.Fatalf("%d addresses each opened up to %d connections (MaxConnsPerAddress) and kept them: %d were "+
				"served, of MaxConnections %d. Then %s was refused: %q.\nA few addresses must not fill the server "+
				"between them: near the global cap, shrink the per-address cap (keep the last places for "+
				"addresses that hold a few)%s", attackers, perAddr, taken, total, c.who, why, c.context())
		}
	}
}
