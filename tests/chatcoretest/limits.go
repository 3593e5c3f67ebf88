package chatcoretest

import (
	"database/sql"
	"fmt"
	"strings"
	"time"

	"serverlab/tests/chatcoretest/hostile"
	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// The defaults of the limits, as docs/chatcore.md ("Limits") gives them.
// The original had none: a name, a message and a GetUsers could be as large
// as a frame, and a reply larger than a frame was sent anyway (or, in the
// course's first server, dropped in silence).
const (
	defaultMaxUserName    = 32
	defaultMaxChannelName = 64
	defaultMaxMessage     = 16 << 10
	defaultMaxUserIDs     = 1000
)

// badNames are names that no server may accept: each would hurt whoever
// displays it (a terminal obeys ESC, a bidi override reverses what follows,
// a zero-width character makes two names look the same) or could not be
// typed in the client (it splits commands on spaces).
var badNames = []struct{ name, why string }{
	{"", "the empty name"},
	{"nul\x00byte", "a NUL"},
	{"esc\x1b[31mred", "an ESC sequence"},
	{"bell\x07", "a control character"},
	{"del\x7f", "DEL"},
	{"c1\u0085", "a C1 control character"},
	{"rtl\u202egnp.exe", "a right-to-left override"},
	{"iso\u2066late", "a bidi isolate"},
	{"zero\u200bwidth", "a zero-width space"},
	{"zw\u200djoiner", "a zero-width joiner"},
	{"bom\ufeff", "a zero-width no-break space"},
	{"two words", "a space"},
	{"tab\tbed", "a tab"},
	{"nbsp\u00a0x", "a no-break space"},
	{"line\u2028sep", "a line separator"},
}

// goodNames must be accepted: letters of any script, digits, punctuation,
// symbols, combining marks.
var goodNames = []string{"zoë", "日本語", "o'brien", "a-b_c.d", "Ωmega", "e\u0301t\u0301e\u0301", "tester7", "#chan"}

// checkNames checks what create accepts as a name: good ones, and by length
// limit−1 and limit (ASCII and two-byte letters), and refuses with
// Invalid name. the bad ones and limit+1.
func checkNames(k *testkit.T, c *client, what string, limit int, create func(id uint64, name string) proto.Requester,
	accepted func(name string, m proto.Message) bool) {
	k.Helper()
	try := func(name, why string, ok bool) {
		k.Helper()
		id := c.id()
		m := c.call(create(id, name))
		switch {
		case ok && !accepted(name, m):
			k.Fatalf("a %s name of %d bytes (%s) must be accepted (the limit is %d bytes)\n  sent: %q\n   got: %s%s",
				what, len(name), why, limit, short(name), show(m), c.context())
		case !ok && !same(m, proto.ErrorResponse{RequestID: id, Value: proto.MsgInvalidName}):
			k.Fatalf("a %s name with %s must be refused\n  sent: %q (%d bytes)\n  want: %s\n   got: %s%s",
				what, why, short(name), len(name), show(proto.ErrorResponse{RequestID: id, Value: proto.MsgInvalidName}),
				show(m), c.context())
		}
	}
	for i, n := range goodNames {
		try(fmt.Sprintf("%s%d", n, i), "letters, digits, marks, punctuation and symbols", true)
	}
	try(strings.Repeat("a", limit-1), "limit−1", true)
	try(strings.Repeat("b", limit), "exactly the limit", true)
	try(strings.Repeat("é", limit/2)[:limit/2*2], "exactly the limit, in two-byte letters", true)
	try(strings.Repeat("c", limit+1), fmt.Sprintf("one byte more than the limit of %d bytes", limit), false)
	try(strings.Repeat("é", limit/2)+"d", fmt.Sprintf("one byte more than the limit of %d bytes", limit), false)
	try(strings.Repeat("n", 512<<10), "half a megabyte", false)
	for i, b := range badNames {
		name := b.name
		if name != "" {
			name += fmt.Sprint(i)
		}
		try(name, b.why, false)
	}
}

func short(s string) string {
	if len(s) > 80 {
		return fmt.Sprintf("%s… (%d bytes)", s[:80], len(s))
	}
	return s
}

// userLimits checks exercise 7.2's limits: user names (length and what they
// may hold), the ids of one GetUsers, and a reply too large for a frame.
func userLimits(k *testkit.T, impl Impl, e *env) {
	createUser := func(id uint64, name string) proto.Requester {
		return proto.CreateUserRequest{RequestID: id, Name: name, Password: "pw"}
	}
	isUser := func(name string, m proto.Message) bool {
		r, ok := m.(proto.CreateUserResponse)
		return ok && r.User.Name == name && r.User.ID != 0
	}

	loginThrottles(k, impl, e)
	hostile.Accounts(k, hostileStart(impl))

	check(k, e, "user-names", func(k *testkit.T, e *env) {
		checkNames(k, e.dial("client"), "user", defaultMaxUserName, createUser, isUser)
	})

	check(k, e, "user-name-limit-configured", func(k *testkit.T, _ *env) {
		e := start(k, impl, Config{MaxUserName: 12})
		checkNames(k, e.dial("client"), "user (MaxUserName 12)", 12, createUser, isUser)
	})

	check(k, e, "getusers-bounded", func(k *testkit.T, e *env) {
		c := e.login("ids-asker")
		ids := func(n int) []uint32 {
			s := make([]uint32, n)
			for i := range s {
				s[i] = c.user.ID
			}
			return s
		}
		for _, n := range []int{defaultMaxUserIDs - 1, defaultMaxUserIDs} {
			m := c.call(proto.GetUsersRequest{RequestID: c.id(), UserIDs: ids(n)})
			if r, ok := m.(proto.GetUsersResponse); !ok || len(r.Users) != n {
				k.Fatalf("GetUsers with %d ids (the limit is %d): want 112 with %d users, got %s%s",
					n, defaultMaxUserIDs, n, show(m), c.context())
			}
		}
		id := c.id()
		c.callExpect(fmt.Sprintf("GetUsers with %d ids, one more than the limit of %d (each id costs the server a "+
			"user in its reply: 100 000 repeated ids of a long name built hundreds of megabytes)",
			defaultMaxUserIDs+1, defaultMaxUserIDs),
			proto.GetUsersRequest{RequestID: id, UserIDs: ids(defaultMaxUserIDs + 1)},
			proto.ErrorResponse{RequestID: id, Value: proto.MsgTooManyIDs})
	})

	check(k, e, "reply-too-large", func(k *testkit.T, e *env) {
		c := e.login("big-asker")
		// The largest name a GetUser frame can carry: its answer, "User with
		// name <name> not found", cannot fit in a frame.
		empty, _ := proto.Encode(proto.GetUserRequest{RequestID: 777, Name: ""})
		name := strings.Repeat("x", proto.MaxFrame-(len(empty)-proto.HeaderSize))
		c.callExpect("GetUser of a name so long that the answer would not fit in a frame: the answer must still come, "+
			"as an error with the request's id (a reply that cannot be sent must not become silence)",
			proto.GetUserRequest{RequestID: 777, Name: name},
			proto.ErrorResponse{RequestID: 777, Value: proto.MsgReplyTooLarge})
		c.callExpect("the connection goes on after a reply too large", proto.GetUserRequest{RequestID: 778, Name: "big-asker"},
			proto.GetUserResponse{RequestID: 778, User: c.user})
	})

	check(k, e, "getusers-reply-too-large", func(k *testkit.T, _ *env) { checkUsersReplyTooLarge(k, impl) })
}

// checkUsersReplyTooLarge: a GetUsers whose list would not fit in a frame
// gets one answer, Reply too large., and nothing more. Only a database from
// before the name limits holds names that long, so the check writes one
// there: a user named with 600 KiB, asked for twice (1.2 MiB of list). A
// handler that answers the error and then goes on to send the list sends a
// second answer to the same request (which cannot be encoded either, so it
// becomes a second Reply too large.): the client takes it for the answer to
// its next request.
func checkUsersReplyTooLarge(k *testkit.T, impl Impl) {
	k.Helper()
	e := start(k, impl, Config{})
	big := proto.User{Name: strings.Repeat("n", 600<<10)}
	fill(k, e, 1, func(tx *sql.Tx, _ int) error {
		r, err := tx.Exec(`INSERT INTO chat_users (name, password) VALUES (?, ?)`, big.Name, "not a hash: nobody logs in")
		if err != nil {
			return err
		}
		id, err := r.LastInsertId()
		big.ID = uint32(id)
		return err
	})
	c := e.login("huge-asker")
	id := c.id()
	c.send(proto.GetUsersRequest{RequestID: id, UserIDs: []uint32{big.ID, big.ID}})
	c.expect(fmt.Sprintf("GetUsers of a user whose name is %d bytes (a database from before the name limits), twice: "+
		"the list would not fit in a frame", len(big.Name)),
		proto.ErrorResponse{RequestID: id, Value: proto.MsgReplyTooLarge})
	c.expectNothing("one answer per request: after Reply too large. the handler must stop (return), not go on to " +
		"send the list too")
	c.callExpect("the same user once fits", proto.GetUsersRequest{RequestID: 901, UserIDs: []uint32{big.ID}},
		proto.GetUsersResponse{RequestID: 901, Users: []proto.User{big}})
}

// loginThrottles checks exercise 7.2's defences against password guessing:
// a connection is closed after MaxLoginFailures failed logins, and an
// address with AddressFailures failures is refused without a hash. The
// original let anyone guess as fast as the hashes ran, and the queue of
// guesses' hashes made every honest login wait behind it.
func loginThrottles(k *testkit.T, impl Impl, e *env) {
	const defaultMaxLoginFailures = 5
	wrong := func(c *client, name string) proto.Message {
		k.Helper()
		return c.call(proto.AuthenticateRequest{RequestID: c.id(), Name: name, Password: "a wrong guess"})
	}
	check(k, e, "login-failures-per-connection", func(k *testkit.T, _ *env) {
		e := start(k, impl, Config{})
		e.dial("registrar").register("guessed")
		a := e.dial("a guesser who stops in time")
		for i := 1; i < defaultMaxLoginFailures; i++ {
			if m := wrong(a, "guessed"); !same(m, proto.ErrorResponse{RequestID: a.nextID, Value: proto.MsgWrongPassword}) {
				k.Fatalf("failed login %d of %d on one connection: want %s, got %s%s", i, defaultMaxLoginFailures,
					proto.MsgWrongPassword, show(m), a.context())
			}
		}
		a.authenticate("guessed") // limit−1 failures: the connection still works
		b := e.dial("a guesser")
		for i := 1; i < defaultMaxLoginFailures; i++ {
			wrong(b, "nobody-"+fmt.Sprint(i))
		}
		id := b.nextID + 1
		b.callExpect(fmt.Sprintf("failed login number %d on one connection (the limit is %d; sshd closes after its "+
			"MaxAuthTries): refuse it", defaultMaxLoginFailures, defaultMaxLoginFailures),
			proto.AuthenticateRequest{RequestID: id, Name: "guessed", Password: "one more guess"},
			proto.ErrorResponse{RequestID: id, Value: proto.MsgTooManyFailures})
		b.nextID = id
		b.expectClosed("after its last failed login a connection is closed: a guesser must reconnect", 5e9,
			proto.TypeUserLoginEvent, proto.TypeUserLogoutEvent)
	})

	check(k, e, "login-failures-per-address", func(k *testkit.T, _ *env) {
		const limit = 3
		e := start(k, impl, Config{AddressFailures: limit, FailureWindow: 1e12})
		e.dial("registrar").register("target")
		wrong(e.dial("guesser 1"), "target")
		wrong(e.dial("guesser 2"), "nobody")
		c := e.dial("guesser 3")
		if m := wrong(c, "target"); !same(m, proto.ErrorResponse{RequestID: c.nextID, Value: proto.MsgWrongPassword}) {
			k.Fatalf("failed login %d of %d from one address: want %s, got %s%s", limit, limit, proto.MsgWrongPassword,
				show(m), c.context())
		}
		for _, name := range []string{"target", "nobody"} {
			d := e.dial("guesser, after the address's limit")
			if m := wrong(d, name); !same(m, proto.ErrorResponse{RequestID: d.nextID, Value: proto.MsgTooManyFailures}) {
				k.Fatalf("a login from an address with %d failed logins (AddressFailures %d), on a new connection, "+
					"name %q: want %s at once, without a hash, got %s%s", limit, limit, name,
					show(proto.ErrorResponse{RequestID: d.nextID, Value: proto.MsgTooManyFailures}), show(m), d.context())
			}
		}
	})
}

// channelLimits checks exercise 7.3's limits: channel names, the channels
// of the server and of one user.
func channelLimits(k *testkit.T, impl Impl, e *env) {
	check(k, e, "channel-names", func(k *testkit.T, e *env) {
		c := e.login("namer")
		checkNames(k, c, "channel", defaultMaxChannelName,
			func(id uint64, name string) proto.Requester {
				return proto.CreateChannelRequest{RequestID: id, Name: name}
			},
			func(name string, m proto.Message) bool {
				r, ok := m.(proto.CreateChannelResponse)
				return ok && r.Channel.Name == name && r.Channel.ID != 0
			})
		m := c.call(proto.GetChannelsRequest{RequestID: 9000})
		if _, ok := m.(proto.GetChannelsResponse); !ok {
			k.Fatalf("GetChannels after refused names: want 120, got %s%s", show(m), c.context())
		}
	})

	check(k, e, "channel-caps", func(k *testkit.T, _ *env) {
		const total, perUser = 6, 3
		e := start(k, impl, Config{MaxChannels: total, MaxChannelsPerUser: perUser})
		a, b, c := e.login("cap-a"), e.login("cap-b"), e.login("cap-c")
		refused := func(who *client, name, why string) {
			k.Helper()
			id := who.id()
			who.callExpect(why, proto.CreateChannelRequest{RequestID: id, Name: name},
				proto.ErrorResponse{RequestID: id, Value: proto.MsgTooManyChannels})
		}
		a1 := a.createChannel("a1")
		a.createChannel("a2")
		a.createChannel("a3") // the per-user limit, exactly
		refused(a, "a4", fmt.Sprintf("a user's channel number %d (MaxChannelsPerUser %d)", perUser+1, perUser))
		a.callExpect("an existing name at the limit still gives the existing channel",
			proto.CreateChannelRequest{RequestID: 50, Name: "a1"}, proto.CreateChannelResponse{RequestID: 50, Channel: a1})
		b.createChannel("b1")
		b.createChannel("b2") // total − 1
		c.createChannel("c1") // the server's limit, exactly
		refused(b, "b3", fmt.Sprintf("the server's channel number %d (MaxChannels %d), by a user who has created only 2",
			total+1, total))
		refused(c, "c2", fmt.Sprintf("the server's channel number %d (MaxChannels %d)", total+1, total))
		m := c.call(proto.GetChannelsRequest{RequestID: 60})
		if r, ok := m.(proto.GetChannelsResponse); !ok || len(r.Channels) != total {
			k.Fatalf("GetChannels at the limit: want 120 with %d channels, got %s%s", total, show(m), c.context())
		}
	})
}

// historyLimits checks exercise 7.4's limits: the size of a chat message,
// and a history of large messages.
func historyLimits(k *testkit.T, impl Impl, e *env) {
	sizes := func(k *testkit.T, e *env, who string, limit int) {
		k.Helper()
		c := e.login(who)
		ch := c.createChannel(who)
		c.join(ch.ID)
		c.settle()
		c.say(ch.ID, strings.Repeat("a", limit-1))
		c.say(ch.ID, strings.Repeat("b", limit))
		c.send(proto.WriteChat{Content: strings.Repeat("c", limit+1)})
		c.expect(fmt.Sprintf("a chat message of %d bytes, one more than the limit of %d", limit+1, limit),
			proto.Error{Value: proto.MsgMessageTooLong})
		c.say(ch.ID, "after a refused message")
	}
	check(k, e, "message-size", func(k *testkit.T, e *env) {
		sizes(k, e, "sizer", defaultMaxMessage)
	})
	check(k, e, "message-size-configured", func(k *testkit.T, _ *env) {
		sizes(k, start(k, impl, Config{MaxMessage: 2000}), "sizer2000", 2000)
	})

	check(k, e, "one-server-per-database", func(k *testkit.T, e *env) {
		srv, err := impl.NewServer(Config{DBPath: e.cfg.DBPath, Logger: e.cfg.Logger})
		if err == nil {
			srv.Close()
			k.Fatalf("a second server on the database of a running one (%s) was built without an error: lock the "+
				"file (flock, exclusive, non-blocking) — two servers would keep two caches of users and channels and "+
				"hand the same name out twice", e.cfg.DBPath)
		}
		c := e.login("lock-check")
		c.expectAnswer("the running server goes on", c.sendGetChannels())
	})

	check(k, e, "history-of-large-messages", func(k *testkit.T, _ *env) {
		const size, n = 300 << 10, 4
		e := start(k, impl, Config{MaxMessage: size})
		c := e.login("large")
		ch := c.createChannel("large")
		c.join(ch.ID)
		c.settle()
		for i := range n {
			c.say(ch.ID, fmt.Sprintf("%02d", i)+strings.Repeat("x", size-2))
		}
		m := c.call(proto.GetChatsRequest{RequestID: 70, ChannelID: ch.ID, Limit: n})
		r, ok := m.(proto.GetChatsResponse)
		if !ok || len(r.Messages) == 0 {
			k.Fatalf("GetChats of %d messages of %d KiB (more than a frame together): want 106 with the newest "+
				"messages that fit in one frame — at least the newest one — got %s%s", n, size>>10, show(m), c.context())
		}
		for i, msg := range r.Messages {
			if want := fmt.Sprintf("%02d", n-len(r.Messages)+i); !strings.HasPrefix(msg.Content, want) {
				k.Fatalf("GetChats of large messages: want the newest %d, oldest first (%s…%02d); message %d is %q…",
					len(r.Messages), want, n-1, i, short(msg.Content[:2]))
			}
		}
	})
}

// expectNothingYet reads for a moment and checks that nothing arrived and
// the connection is open.
func (c *client) expectNothingYet() {
	c.k.Helper()
	if c.closedNow() {
		c.k.Fatalf("%s: the connection was closed%s", c.who, c.context())
	}
}

// connectionLimits checks exercise 7.6's bounds on connections: a cap on
// how many may be open (the one past it is told why and closed, and a
// place that frees up is given again), and an idle limit for every
// connection, also a logged-in one that never sent a heartbeat. The
// original had neither: 245 silent logged-in clients held every file
// descriptor of a 256-descriptor limit for ever.
func connectionLimits(k *testkit.T, impl Impl, e *env) {
	check(k, e, "connection-cap", func(k *testkit.T, _ *env) {
		const limit = 3
		e := start(k, impl, Config{MaxConnections: limit})
		// The suite's first connection may still be counted for a moment
		// after it closed: retry a connection that is refused, within a
		// deadline, until it is served.
		served := func(who string) *client {
			k.Helper()
			deadline := time.Now().Add(testkit.IOTimeout)
			for {
				c := e.dial(who)
				id := c.sendGetChannels()
				m, err := c.tryNext()
				if r, ok := m.(proto.Requester); err == nil && ok && r.Request() == id {
					return c
				}
				c.nc.Close()
				if time.Now().After(deadline) {
					k.Fatalf("%s: with %d connections allowed and fewer open, a new connection must be served; "+
						"the last try got %s%s", who, limit, describe(err), c.context())
				}
				pause(10 * time.Millisecond)
			}
		}
		var open []*client
		for i := range limit {
			open = append(open, served(fmt.Sprintf("connection %d of %d", i+1, limit)))
		}
		over := e.dial(fmt.Sprintf("connection %d (MaxConnections %d)", limit+1, limit))
		over.expect("a connection past MaxConnections is told why (NATS: 'maximum connections exceeded')",
			proto.Error{Value: proto.MsgServerBusy})
		over.expectClosed("and then closed", testkit.IOTimeout)
		open[0].nc.Close()
		served("a connection after one of the others closed")
	})

	check(k, e, "pre-auth-input-budget", func(k *testkit.T, _ *env) {
		const budget = 1<<20 + 1000
		e := start(k, impl, Config{PreAuthBudget: budget})
		// A stranger begins a frame of 1 MiB and sends only 10 bytes of it:
		// it holds 1 MiB of the budget while it dawdles.
		holder := e.dial("a stranger in the middle of a 1 MiB frame")
		const req = `{"payload":{"request_id":1},"type_id":119}`
		full := body(req + strings.Repeat(" ", proto.MaxFrame-len(req)))
		holder.write(full[:proto.HeaderSize+10], "the header of a 1 MiB frame and 10 bytes of it")
		holder.expectNothingYet()
		big := func() []byte {
			return body(`{"payload":{"request_id":2},"type_id":119}` + strings.Repeat(" ", 600<<10))
		}
		member := e.login("budget-member")
		member.write(big(), "a 600 KiB GetChannels, logged in")
		member.expectAnswer("a logged-in client's large frame does not draw on the budget of strangers", 2)
		stranger := e.dial("a second stranger")
		stranger.write(big(), "a 600 KiB GetChannels, not logged in")
		stranger.expect(fmt.Sprintf("a large frame from a connection that has not logged in, while others hold the "+
			"budget for unauthenticated input (PreAuthBudget %d bytes)", budget), proto.Error{Value: proto.MsgServerBusy})
		stranger.expectClosed("and then it is closed", testkit.IOTimeout)
		holder.write(full[proto.HeaderSize+10:], "the rest of the 1 MiB frame")
		holder.waitFor("the frame that held the budget is answered when it is complete",
			proto.ErrorResponse{RequestID: 1, Value: proto.MsgNotAuthorized})
	})

	check(k, e, "max-idle", func(k *testkit.T, _ *env) {
		const idle = 700 * time.Millisecond
		e := start(k, impl, Config{MaxIdle: idle, LoginTimeout: time.Minute, IdleTimeout: time.Minute})
		a := e.login("idle-quiet")
		start := time.Now()
		a.expectClosed(fmt.Sprintf("a logged-in client that never sent a heartbeat and stays silent for MaxIdle (%v) "+
			"is closed: quiet is fine for a while, not for ever", idle), testkit.IOTimeout,
			proto.TypeUserLoginEvent, proto.TypeUserLogoutEvent)
		if took := time.Since(start); took < idle/2 {
			k.Fatalf("a quiet client was closed after %v, before MaxIdle (%v)", took, idle)
		}
	})
}
