package chatcoretest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"serverlab/tests/chatcoretest/hostile"
	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
	"serverlab/tools/given/lab"
)

// hostileStart is how the hostile suite of the chatcore family
// (tests/chatcoretest/hostile, which chapter 08 runs too) starts this
// chapter's servers: with the limits a check sets, on a fresh database.
func hostileStart(impl Impl) hostile.Start {
	return func(k *testkit.T, l hostile.Limits) string {
		k.Helper()
		return start(k, impl, Config{
			LoginTimeout:          l.LoginTimeout,
			IdleTimeout:           l.IdleTimeout,
			WriteTimeout:          l.WriteTimeout,
			MaxConnections:        l.MaxConnections,
			MaxConnsPerAddress:    l.MaxConnsPerAddress,
			PreAuthBudget:         l.PreAuthBudget,
			InputBudget:           l.InputBudget,
			OutputBudget:          l.OutputBudget,
			HistoryReads:          l.HistoryReads,
			MaxPending:            l.MaxPending,
			MaxChannels:           l.MaxChannels,
			MaxChannelsPerUser:    l.MaxChannelsPerUser,
			MaxChannelsPerAddress: l.MaxChannelsPerAddress,
			MaxStoreBytes:         l.MaxStoreBytes,
			AddressFailures:       l.AddressFailures,
			FailureWindow:         l.FailureWindow,
			MaxMessage:            l.MaxMessage,
			PresenceBurst:         l.PresenceBurst,
			PresenceRate:          l.PresenceRate,
			ChatBurst:             l.ChatBurst,
			ChatRate:              l.ChatRate,
			HashWait:              l.HashWait,
			BurstHash:             l.BurstHash,
		}).srv.Addr
	}
}

// checkHashQueueFull: with one password hash allowed to wait (HashQueue 1)
// and slow hashes (SlowHash), 24 clients register at once, each on a
// connection of its own. The cores take a few; one waits; every other one
// must be answered 100 "Server busy." with its request id at once, inside
// the client's timeout, rather than wait in a queue without bound for a
// hash that comes too late for it (the original's load tester gave up after
// 10 s, and 450 queued registrations made every later login time out).
func checkHashQueueFull(k *testkit.T, impl Impl) {
	k.Helper()
	const clients = 24
	e := start(k, impl, Config{SlowHash: true, HashQueue: 1, HashWait: time.Minute})
	regs := make([]*client, clients)
	for i := range regs {
		regs[i] = e.dial(fmt.Sprintf("registrant %d of %d", i+1, clients))
	}
	sent := time.Now()
	for i, c := range regs {
		c.send(proto.CreateUserRequest{RequestID: 1, Name: fmt.Sprintf("queued-%d", i), Password: "pw-queued"})
	}
	busy := 0
	for i, c := range regs {
		m, err := c.tryNext()
		if err != nil {
			k.Fatalf("%d clients registered at once with slow hashes and HashQueue 1; %s got no answer within %v "+
				"(%s).\nA hash that cannot wait (the queue is full) must be refused at once with 100 \"Server "+
				"busy.\", so that every client is answered within its timeout%s",
				clients, c.who, testkit.IOTimeout, describe(err), c.context())
		}
		switch {
		case same(m, proto.ErrorResponse{RequestID: 1, Value: proto.MsgServerBusy}):
			busy++
		case m.Type() == proto.TypeCreateUserResponse:
		default:
			k.Fatalf("registration %d of %d sent at once (HashQueue 1): want 110 or 100 {request_id 1, \"Server "+
				"busy.\"}, got %s%s", i+1, clients, show(m), c.context())
		}
	}
	if busy == 0 {
		k.Fatalf("%d registrations with slow hashes arrived at once, with room for 1 waiting hash (HashQueue 1), "+
			"and all %d were hashed (the last answer %v after the first request): none was told 100 \"Server "+
			"busy.\". The hash queue is bounded: a hash that finds it full is not queued", clients, clients,
			time.Since(sent).Round(time.Millisecond))
	}
}

// checkStorageFailure: when the store fails under a request (the disk,
// injected through FailStore before the store's method), the client is told
// 100 "Storage failed." with its request id; the store's own words (here
// SQLite's "disk I/O error") are for the log, not for the client; and once
// the disk works again the same request succeeds.
func checkStorageFailure(k *testkit.T, impl Impl, method string) {
	k.Helper()
	const injected = "injected: disk I/O error (SQLITE_IOERR)"
	var mu sync.Mutex
	broken := false
	setBroken := func(b bool) { mu.Lock(); broken = b; mu.Unlock() }
	fail := func(m string) error {
		mu.Lock()
		defer mu.Unlock()
		if broken && m == method {
			return errors.New(injected)
		}
		return nil
	}
	e := start(k, impl, Config{FailStore: fail})
	c := e.login("store-" + strings.ToLower(method))
	var ch proto.Channel
	if method == "History" { // the other two need nothing of later exercises
		ch = c.createChannel("store-channel")
		c.join(ch.ID)
	}
	c.settle()
	request := func(id uint64) proto.Requester {
		switch method {
		case "CreateUser":
			return proto.CreateUserRequest{RequestID: id, Name: "store-newcomer", Password: "pw-newcomer"}
		case "CreateChannel":
			return proto.CreateChannelRequest{RequestID: id, Name: "store-new-channel"}
		default:
			return proto.GetChatsRequest{RequestID: id, ChannelID: ch.ID, Limit: 10}
		}
	}
	setBroken(true)
	req := request(c.id())
	got := c.call(req)
	if v, ok := got.(proto.ErrorResponse); ok && strings.Contains(v.Value, "I/O") {
		k.Fatalf("the store's %s failed (%q, injected): the client was sent the store's own words, %s. Tell "+
			"it 100 \"Storage failed.\" with its request id; the details are for the server's log%s",
			method, injected, show(got), c.context())
	}
	if want := (proto.ErrorResponse{RequestID: req.Request(), Value: proto.MsgStorageFailed}); !same(got, want) {
		k.Fatalf("the store's %s failed (the disk, injected) under %s\n  want: %s\n   got: %s%s",
			method, show(req), show(want), show(got), c.context())
	}
	setBroken(false)
	req = request(c.id())
	if m := c.call(req); m.Type() == proto.TypeErrorResponse {
		k.Fatalf("once the disk works again, %s must succeed; got %s%s", show(req), show(m), c.context())
	}
}

// served dials with dial until a connection is served (the answer to a
// first request arrives), within IOTimeout: a connection that just closed
// may still be counted for a moment.
func (e *env) served(who string, dial func(string) *client, what string) *client {
	e.k.Helper()
	deadline := time.Now().Add(testkit.IOTimeout)
	for {
		c := dial(who)
		id := c.sendGetChannels()
		m, err := c.tryNext()
		if r, ok := m.(proto.Requester); err == nil && ok && r.Request() == id {
			return c
		}
		c.nc.Close()
		if time.Now().After(deadline) {
			e.k.Fatalf("%s: %s must be served; the last try got %s%s", what, who, describe(err), c.context())
		}
		pause(10 * time.Millisecond)
	}
}

// dialFrom opens a plain connection from the local address ip. It reports
// false if the machine cannot (not every system routes all of 127.0.0.0/8).
func (e *env) dialFrom(who, ip string) (*client, bool) {
	e.k.Helper()
	d := net.Dialer{Timeout: testkit.IOTimeout, LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	nc, err := d.Dial("tcp", e.srv.Addr)
	if errors.Is(err, syscall.EADDRNOTAVAIL) {
		e.k.Logf("cannot connect from %s on this machine (%v): the per-address part of the check is skipped", ip, err)
		return nil, false
	}
	if err != nil {
		e.k.Fatalf("dial %s from %s: %v", e.srv.Addr, ip, err)
	}
	e.k.OnAbort(func() { nc.Close() })
	e.k.Cleanup(func() { nc.Close() })
	return &client{k: e.k, e: e, who: who, nc: nc, r: bufio.NewReader(nc)}, true
}

// checkAddUserAdmin: the operator's way to make an administrator. AddUser
// (chatcore-server -add-user) creates the account in the database before the
// server starts; a server started with that name in Admins lets it Shutdown
// (and whoever registers a listed name afterwards gets nothing: the
// registration-grants-no-admin check). AddUser checks the name as a
// registration does and refuses one that exists.
func checkAddUserAdmin(k *testkit.T, impl Impl) {
	k.Helper()
	e := start(k, impl, Config{})
	e.srv.Close() // AddUser runs while no server has the database
	if impl.AddUser == nil {
		k.Fatalf("the chapter's wiring has no AddUser")
	}
	if err := impl.AddUser(e.cfg, "root\x1b[2J", "pw"); err == nil {
		k.Fatalf("AddUser made an account named %q (an escape sequence): it checks names as a registration does",
			"root\\x1b[2J")
	}
	if err := impl.AddUser(e.cfg, "root", password("root")); err != nil {
		k.Fatalf("AddUser(%q) on a database no server has open: %v", "root", err)
	}
	if err := impl.AddUser(e.cfg, "root", "another"); err == nil {
		k.Fatalf("AddUser(%q) a second time succeeded: a name that exists is refused", "root")
	}
	e.cfg.Admins = []string{"root"}
	e.serve()
	root := e.dial("root")
	root.authenticate("root")
	root.send(proto.Shutdown{})
	root.waitFor("an administrator whose account AddUser made (before the start) sends Shutdown: it is obeyed",
		proto.Error{Value: proto.MsgShuttingDown})
	root.expectClosed("then its connection is closed", testkit.IOTimeout, proto.TypeUserLoginEvent, proto.TypeUserLogoutEvent)
	if err, stopped := e.srv.Wait(); !stopped || !errors.Is(err, lab.ErrServerClosed) {
		k.Fatalf("after an administrator's Shutdown, Serve must return lab.ErrServerClosed; stopped %v, returned %v", stopped, err)
	}
}
