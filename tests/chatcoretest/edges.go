package chatcoretest

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
	"serverlab/tools/given/lab"
)

// checkChannelOrder: GetChannels lists every channel in ascending id order,
// however many there are. Seven channels, created under names in no order:
// a listing taken from a map without sorting is in id order by chance once
// in 5040 (with two channels, one time in two).
func checkChannelOrder(k *testkit.T, e *env) {
	k.Helper()
	a := e.login("order-ann")
	created := map[uint32]string{}
	for _, name := range []string{"kilo", "alpha", "zulu", "mike", "bravo", "yankee", "echo"} {
		ch := a.createChannel("order-" + name)
		created[ch.ID] = ch.Name
	}
	m := a.call(proto.GetChannelsRequest{RequestID: a.id()})
	list, ok := m.(proto.GetChannelsResponse)
	if !ok {
		k.Fatalf("GetChannels after creating 7 channels: want 120, got %s%s", show(m), a.context())
	}
	for i := 1; i < len(list.Channels); i++ {
		if list.Channels[i-1].ID >= list.Channels[i].ID {
			k.Fatalf("GetChannels must list the channels in ascending id order (sort what you collect from the "+
				"map: a map's order is random), got %v", list.Channels)
		}
	}
	for _, ch := range list.Channels {
		delete(created, ch.ID)
	}
	if len(created) > 0 {
		k.Fatalf("GetChannels after creating 7 channels misses %v; got %v", created, list.Channels)
	}
}

// checkLeaverHearsNothing: a connection is in one channel at a time. Once it
// has moved to another channel, the one it left no longer reaches it: a join
// there is heard by the members who stayed, not by the one who left.
func checkLeaverHearsNothing(k *testkit.T, e *env) {
	k.Helper()
	amy, ben, cal := e.login("left-amy"), e.login("left-ben"), e.login("left-cal")
	stay, away := amy.createChannel("left-stay"), amy.createChannel("left-away")
	amy.join(stay.ID)
	ben.join(stay.ID)
	amy.join(away.ID) // leaves stay
	amy.settle()
	ben.settle()
	cal.join(stay.ID)
	ben.waitFor("ben, in left-stay, hears cal join it", proto.ChannelJoinEvent{ChannelID: stay.ID, UserID: cal.user.ID})
	amy.expectNothing("amy joined left-stay, then moved to left-away; then cal joined left-stay. A connection is " +
		"in one channel at a time: take it out of the members of the channel it leaves, or it keeps hearing that " +
		"channel")
}

// checkConcurrentCreateAndList: channels are created and listed by many
// clients at once. Every listing is sorted and holds only whole channels;
// run with -race, a listing that reads the channel map without the lock is
// a data race even when the answers come out right. The listers list without
// pause for as long as the creators create, so that some listing is copying
// the map whenever a channel is added: the server starts with 2000 channels
// (written into its database before a restart), so that copying the map
// takes a while.
func checkConcurrentCreateAndList(k *testkit.T, impl Impl) {
	k.Helper()
	const creators, listers, each = 4, 4, 15
	e := start(k, impl, Config{})
	fillChannels(k, e, 2000)
	var clients []*client
	for i := range creators + listers {
		clients = append(clients, e.login(fmt.Sprintf("race-%d", i)))
	}
	var creating, listing sync.WaitGroup
	done := make(chan struct{})
	problems := make(chan string, creators+listers)
	for i, c := range clients {
		run := func(req func(n int) proto.Requester, more func(n int) bool) {
			for n := 0; more(n); n++ {
				r := req(n)
				m, err := c.rawCall(r)
				if err != nil {
					problems <- fmt.Sprintf("%s: request %d: %v", c.who, r.Request(), err)
					return
				}
				if list, ok := m.(proto.GetChannelsResponse); ok {
					for x := 1; x < len(list.Channels); x++ {
						if list.Channels[x-1].ID >= list.Channels[x].ID || list.Channels[x].Name == "" {
							problems <- fmt.Sprintf("%s: a listing taken while channels were being created is "+
								"not in ascending id order, or holds a channel without a name: %v", c.who, list.Channels)
							return
						}
					}
				}
			}
		}
		if i < creators {
			creating.Go(func() {
				run(func(n int) proto.Requester {
					return proto.CreateChannelRequest{RequestID: uint64(1000 + n), Name: fmt.Sprintf("race-%d-%d", i, n)}
				}, func(n int) bool { return n < each })
			})
			continue
		}
		listing.Go(func() {
			run(func(n int) proto.Requester { return proto.GetChannelsRequest{RequestID: uint64(1000 + n)} },
				func(n int) bool {
					select {
					case <-done:
						return n < 3 // at least a few, even on a fast machine
					default:
						return true
					}
				})
		})
	}
	creating.Wait()
	close(done)
	listing.Wait()
	close(problems)
	for p := range problems {
		k.Fatalf("%d clients created channels while %d listed them: %s", creators, listers, p)
	}
}

// rawCall sends req and reads until its answer, skipping events. Unlike
// call it reports instead of failing the check, so that goroutines may use
// it.
func (c *client) rawCall(req proto.Requester) (proto.Message, error) {
	f, err := proto.Encode(req)
	if err != nil {
		return nil, err
	}
	c.nc.SetWriteDeadline(time.Now().Add(testkit.IOTimeout))
	if _, err := c.nc.Write(f); err != nil {
		return nil, err
	}
	for {
		c.nc.SetReadDeadline(time.Now().Add(testkit.IOTimeout))
		m, err := proto.Read(c.r)
		if err != nil {
			return nil, err
		}
		if r, ok := m.(proto.Requester); ok && r.Request() == req.Request() {
			return m, nil
		}
	}
}

// checkLogoutRestartsLoginTimeout: a logout makes the connection
// unauthenticated again, and it gets LoginTimeout from the logout to log in
// once more: not a deadline that passed while it was logged in (it would be
// cut off at once), and not none at all (an idle connection would hold its
// file descriptor for ever).
func checkLogoutRestartsLoginTimeout(k *testkit.T, e *env, loginTimeout time.Duration) {
	k.Helper()
	a := e.login("lv-relogin")
	pause(loginTimeout + loginTimeout/2) // logged in, quiet, past the first login deadline
	a.send(proto.LogoutRequest{RequestID: 1})
	a.waitFor("a logout", proto.LogoutResponse{RequestID: 1})
	pause(loginTimeout / 4)
	if a.closedNow() {
		k.Fatalf("a client logged in, stayed %v (past LoginTimeout, %v, counted from its connection), logged out, "+
			"and was cut off %v later: after a logout the connection has LoginTimeout from the logout to log "+
			"in again%s", loginTimeout+loginTimeout/2, loginTimeout, loginTimeout/4, a.context())
	}
	a.callExpect("a heartbeat, LoginTimeout/4 after a logout", proto.HeartbeatRequest{RequestID: 2},
		proto.HeartbeatResponse{RequestID: 2})
	a.expectClosed(fmt.Sprintf("a client that logged out and did not log in again within LoginTimeout (%v) "+
		"is closed: a logout restarts the login timeout", loginTimeout), testkit.IOTimeout, proto.TypeUserLogoutEvent)
}

// checkKeepAlive: every accepted connection has TCP keep-alive on, so that
// the kernel finds a peer that vanished without a FIN (the lesson's 15 s,
// four probes). The server is served on a listener whose own keep-alive is
// off (Go's net.Listen turns it on for every accepted connection, which would
// hide a server that never asks), and the state of the server's socket is
// read where every process on the machine can see it: /proc/net/tcp, whose
// timer field says "2" (the keep-alive timer) for a connection with
// keep-alive on and nothing in flight, and when it fires.
func checkKeepAlive(k *testkit.T, impl Impl) {
	k.Helper()
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		k.Skipf("needs /proc/net/tcp (Linux): %v", err)
	}
	ln, err := (&net.ListenConfig{KeepAliveConfig: net.KeepAliveConfig{Enable: false}, KeepAlive: -1}).
		Listen(context.Background(), "tcp4", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen: %v", err)
	}
	cfg := Config{DBPath: k.TempDir() + "/chat.db", Logger: testkit.Logger()}
	srv, err := impl.NewServer(cfg)
	if errors.Is(err, lab.ErrNotImplemented) {
		k.Fatalf("building the server needs an earlier exercise: %v", err)
	}
	if err != nil {
		k.Fatalf("NewServer: %v", err)
	}
	e := &env{k: k, impl: impl, cfg: cfg}
	e.raw, e.srv = srv, k.ServeListener(srv, ln)
	c := e.dial("a client")
	c.callExpect("a heartbeat (so that the server has set the connection up)", proto.HeartbeatRequest{RequestID: 1},
		proto.HeartbeatResponse{RequestID: 1})
	server := ln.Addr().(*net.TCPAddr)
	client := c.nc.LocalAddr().(*net.TCPAddr)
	timer, when, err := tcpTimer(server.Port, client.Port)
	if err != nil {
		k.Fatalf("reading the server's socket in /proc/net/tcp: %v", err)
	}
	if timer != 2 {
		k.Fatalf("the server's end of an accepted connection (%v → %v) has no keep-alive timer (/proc/net/tcp "+
			"timer %d, want 2): turn TCP keep-alive on for every accepted connection "+
			"(SetKeepAliveConfig: on, 15 s idle, 15 s between probes, 4 probes), or a client that vanished "+
			"without a FIN stays logged in for ever", server, client, timer)
	}
	if limit := 16 * time.Second; when > limit {
		k.Fatalf("the server's end of an accepted connection probes after %v of silence; the lesson's keep-alive "+
			"probes after 15 s", when)
	}
}

// tcpTimer finds the IPv4 socket whose local port is local and remote port
// remote in /proc/net/tcp and returns its active timer (0 none, 1
// retransmit, 2 keep-alive, …) and when it fires.
func tcpTimer(local, remote int) (timer int, when time.Duration, err error) {
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || !strings.HasSuffix(fields[1], fmt.Sprintf(":%04X", local)) ||
			!strings.HasSuffix(fields[2], fmt.Sprintf(":%04X", remote)) {
			continue
		}
		tr, tm, ok := strings.Cut(fields[5], ":")
		if !ok {
			return 0, 0, fmt.Errorf("unexpected timer field %q", fields[5])
		}
		t, err1 := strconv.ParseInt(tr, 16, 32)
		ticks, err2 := strconv.ParseInt(tm, 16, 64)
		if err1 != nil || err2 != nil {
			return 0, 0, fmt.Errorf("unexpected timer field %q", fields[5])
		}
		return int(t), time.Duration(ticks) * time.Second / 100, nil // USER_HZ ticks
	}
	if err := sc.Err(); err != nil {
		return 0, 0, err
	}
	return 0, 0, fmt.Errorf("no socket 127.0.0.1:%d → :%d", local, remote)
}

// checkHashOutsideLock: a password hash is slow on purpose, so it runs
// outside the server's mutex; hashing under it would stop every other client
// for the hash's whole time. With a slow hash (SlowHash), one client creates a
// user, then logs in with a wrong password (a hash each), while another,
// logged in, sends GetChannels after GetChannels: none may wait for half the
// time the hashing request took. On a busy machine a request can be slow for
// other reasons; a stall is only reported when three tries in a row show it
// (a server that hashes under the lock stalls every time).
func checkHashOutsideLock(k *testkit.T, impl Impl) {
	k.Helper()
	e := start(k, impl, Config{SlowHash: true})
	other := e.login("stall-other")
	cal := e.dial("a client that measures a hash")
	start := time.Now()
	cal.register("stall-measure")
	if hash := time.Since(start); hash < 30*time.Millisecond {
		k.Fatalf("with Config.Hash raised to 32 passes of 4 MiB, creating a user took %v: the server must hash "+
			"with the parameters of Config.Hash", hash)
	}
	id := uint64(100)
	for _, step := range []struct {
		what string
		req  func(try int) proto.Requester
	}{
		{"created a user", func(try int) proto.Requester {
			name := fmt.Sprintf("stall-new-%d", try)
			return proto.CreateUserRequest{RequestID: 1, Name: name, Password: password(name)}
		}},
		{"logged in with a wrong password", func(int) proto.Requester {
			return proto.AuthenticateRequest{RequestID: 2, Name: "stall-measure", Password: "wrong"}
		}},
	} {
		var seen []string
		for try := range 3 {
			slow := e.dial("a client that " + step.what)
			took, worst := stallWhile(k, slow, step.req(try), other, &id, step.what)
			slow.nc.Close()
			if worst <= took/2 {
				break
			}
			seen = append(seen, fmt.Sprintf("%v of %v", worst.Round(time.Millisecond), took.Round(time.Millisecond)))
			if try == 2 {
				k.Fatalf("while another client %s (a password hash), a logged-in client's GetChannels waited "+
					"for most of it, three times in a row (%s).\nHash outside s.mu: look up under the lock, "+
					"unlock, hash, then lock again to store the result; a hash under the lock stops every "+
					"client for its whole time", step.what, strings.Join(seen, ", "))
			}
		}
	}
}

// stallWhile sends req on slow and, until its answer comes, GetChannels
// after GetChannels on other. It returns how long req took and the longest
// GetChannels.
func stallWhile(k *testkit.T, slow *client, req proto.Requester, other *client, id *uint64, what string) (took, worst time.Duration) {
	k.Helper()
	answered := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := slow.rawCall(req)
		answered <- err
	}()
	for {
		t0 := time.Now()
		*id++
		if _, err := other.rawCall(proto.GetChannelsRequest{RequestID: *id}); err != nil {
			k.Fatalf("GetChannels while another client %s: %v%s", what, err, other.context())
		}
		worst = max(worst, time.Since(t0))
		select {
		case err := <-answered:
			if err != nil {
				k.Fatalf("a client %s and got no answer: %v", what, err)
			}
			return time.Since(start), worst
		default:
		}
	}
}

// fillChannels adds n channels to e's database and restarts the server so
// that it loads them.
func fillChannels(k *testkit.T, e *env, n int) {
	k.Helper()
	fill(k, e, n, func(tx *sql.Tx, i int) error {
		_, err := tx.Exec(`INSERT INTO chat_channels (name) VALUES (?)`, fmt.Sprintf("filler-%04d", i))
		return err
	})
}

// fill closes e's server, runs add n times in one transaction on its
// database, and serves it again: a check sets up in a second what thousands
// of requests would take.
func fill(k *testkit.T, e *env, n int, add func(tx *sql.Tx, i int) error) {
	k.Helper()
	e.srv.Close()
	db, err := sql.Open("sqlite", "file:"+e.cfg.DBPath+"?_pragma=busy_timeout(5000)")
	if err != nil {
		k.Fatalf("open the database %s: %v", e.cfg.DBPath, err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		k.Fatalf("filling the database: %v", err)
	}
	for i := range n {
		if err := add(tx, i); err != nil {
			tx.Rollback()
			k.Fatalf("filling the database: %v", err)
		}
	}
	if err := tx.Commit(); err != nil {
		k.Fatalf("filling the database: %v", err)
	}
	e.serve()
}

// checkHistoryLimits: GetChats returns the newest limit messages, oldest
// first, at most 1000 (MaxHistory), and never a frame over 1 MiB: when the
// newest 1000 do not fit, the oldest of them are left out, never the newest.
// A channel with 1001 messages is asked for 999, 1000 and 1001; one with
// 1000 messages of 2 KB (2 MB in all) for 1000.
func checkHistoryLimits(k *testkit.T, impl Impl) {
	k.Helper()
	e := start(k, impl, Config{})
	a := e.login("hist-limits")
	small, large := a.createChannel("hist-1001"), a.createChannel("hist-2mb")
	const many, big = 1001, 2000
	fill(k, e, many+1000, func(tx *sql.Tx, i int) error {
		ch, content := small.ID, fmt.Sprintf("message %d", i+1)
		if i >= many {
			ch, content = large.ID, fmt.Sprintf("%04d ", i-many+1)+strings.Repeat("x", big)
		}
		_, err := tx.Exec(`INSERT INTO chat_messages (channel_id, user_id, content) VALUES (?, ?, ?)`,
			ch, a.user.ID, content)
		return err
	})
	a = e.dial("hist-limits, after a restart")
	a.authenticate("hist-limits")
	for _, tc := range []struct{ limit, want uint32 }{{999, 999}, {1000, 1000}, {1001, 1000}} {
		m := a.call(proto.GetChatsRequest{RequestID: a.id(), ChannelID: small.ID, Limit: tc.limit})
		r, ok := m.(proto.GetChatsResponse)
		what := fmt.Sprintf("GetChats limit %d of a channel with %d messages", tc.limit, many)
		if !ok {
			k.Fatalf("%s: want 106, got %.300s%s", what, show(m), a.context())
		}
		if uint32(len(r.Messages)) != tc.want {
			k.Fatalf("%s: want the newest %d (a history holds at most 1000 messages: MaxHistory), got %d",
				what, tc.want, len(r.Messages))
		}
		for i, msg := range r.Messages {
			if want := fmt.Sprintf("message %d", many-int(tc.want)+1+i); msg.Content != want {
				k.Fatalf("%s: message %d of %d must be %q (the newest %d, oldest first), got %q", what, i+1,
					len(r.Messages), want, tc.want, msg.Content)
			}
		}
	}
	m := a.call(proto.GetChatsRequest{RequestID: a.id(), ChannelID: large.ID, Limit: 1000})
	r, ok := m.(proto.GetChatsResponse)
	what := fmt.Sprintf("GetChats limit 1000 of a channel with 1000 messages of %d bytes (2 MB: not one frame)", big)
	if !ok {
		k.Fatalf("%s: want 106, got %.300s%s", what, show(m), a.context())
	}
	if n := len(r.Messages); n == 0 || n == 1000 {
		k.Fatalf("%s: want as many of the newest as fit in a frame of 1 MiB, got %d messages", what, n)
	}
	for i, msg := range r.Messages {
		if want := fmt.Sprintf("%04d ", 1000-len(r.Messages)+1+i); !strings.HasPrefix(msg.Content, want) {
			k.Fatalf("%s: got %d messages; message %d must be number %q (the newest that fit, oldest first: "+
				"when a history does not fit in a frame, leave out its oldest messages, never its newest), "+
				"got %.20q…", what, len(r.Messages), i+1, strings.TrimSpace(want), msg.Content)
		}
	}
}

// checkCloseEchoesWhatItStored: on Close, a message is stored and echoed, or
// neither. The committer's last batch is committed and then delivered
// before the clients are told "Server shutting down." and closed: a message
// the database holds but its sender never saw echoed would be sent again by
// a careful client, and stored twice. A writer pipelines 30 messages (the
// server reads them from its buffer one after the other, Close or not), a
// reader in the same channel listens, and the commit window makes batches,
// so Close meets one being gathered; then every stored message must have
// reached both, and every echoed one must be stored.
func checkCloseEchoesWhatItStored(k *testkit.T, impl Impl) {
	k.Helper()
	e := start(k, impl, Config{CommitWindow: 20 * time.Millisecond})
	w, r := e.login("sd2-writer"), e.login("sd2-reader")
	ch := w.createChannel("sd2")
	w.join(ch.ID)
	r.join(ch.ID)
	r.settle()
	const n = 30
	var frames []byte
	for i := range n {
		b, _ := proto.Encode(proto.WriteChat{Content: fmt.Sprintf("sd2 %d", i)})
		frames = append(frames, b...)
	}
	w.write(frames, fmt.Sprintf("%d chat messages in one write", n))
	w.waitFor("the first message", proto.ReceiveChat{ChannelID: ch.ID, Content: "sd2 0", UserID: w.user.ID})
	closed := make(chan error, 1)
	go func() { closed <- e.raw.Close() }()
	got := map[*client]map[string]bool{}
	for _, c := range []*client{w, r} {
		got[c] = map[string]bool{}
		for _, m := range c.backlog {
			if rc, ok := m.(proto.ReceiveChat); ok {
				got[c][rc.Content] = true
			}
		}
		c.backlog = nil
		for {
			m, err := c.tryNext()
			if err != nil {
				k.Fatalf("during Close, %s should get the messages that were committed, then %q; got %s after "+
					"%d of them%s", c.who, proto.MsgShuttingDown, describe(err), len(got[c]), c.context())
			}
			if rc, ok := m.(proto.ReceiveChat); ok {
				got[c][rc.Content] = true
				continue
			}
			if same(m, proto.Error{Value: proto.MsgShuttingDown}) {
				break
			}
		}
	}
	got[w]["sd2 0"] = true // waited for above
	if err := <-closed; err != nil {
		k.Fatalf("Close: %v", err)
	}
	rows, err := e.openDB().Query(`SELECT content FROM chat_messages WHERE content LIKE 'sd2 %'`)
	if err != nil {
		k.Fatalf("reading the database: %v", err)
	}
	defer rows.Close()
	stored := map[string]bool{}
	for rows.Next() {
		var content string
		if err := rows.Scan(&content); err != nil {
			k.Fatalf("reading the database: %v", err)
		}
		stored[content] = true
		for _, c := range []*client{w, r} {
			if !got[c][content] {
				k.Fatalf("%q is in the database, but %s (in its channel) never received it before \"Server "+
					"shutting down.\": on Close, commit the last batch and deliver it, and only then tell the "+
					"clients and close (a message stored and never echoed is sent again by its client, and "+
					"stored twice)", content, c.who)
			}
		}
	}
	for content := range got[w] {
		if !stored[content] {
			k.Fatalf("%q was echoed during Close but the database does not hold it: an echo means stored", content)
		}
	}
}

// checkFailedCommit: an echo means "stored", so a message whose transaction
// fails is delivered to nobody: its sender gets 101 "Message not stored.",
// the other members of the channel get nothing, the database does not hold
// it; and once the disk works again, the next message is stored and
// delivered as usual.
func checkFailedCommit(k *testkit.T, impl Impl) {
	k.Helper()
	var failing sync.Mutex
	broken := false
	fail := func() error {
		failing.Lock()
		defer failing.Unlock()
		if broken {
			return errors.New("injected failure: disk I/O error")
		}
		return nil
	}
	setBroken := func(b bool) { failing.Lock(); broken = b; failing.Unlock() }
	e := start(k, impl, Config{FailAppends: fail})
	w, r := e.login("fail-writer"), e.login("fail-reader")
	ch := w.createChannel("fail")
	w.join(ch.ID)
	r.join(ch.ID)
	w.settle()
	r.settle()
	setBroken(true)
	w.send(proto.WriteChat{Content: "lost to the disk"})
	w.expect("a chat message whose transaction failed (the disk, injected): its sender is told, and it is "+
		"delivered to nobody (an echo means stored)", proto.Error{Value: "Message not stored."})
	r.expectNothing("a chat message whose transaction failed is delivered to nobody: deliver only after the " +
		"commit succeeded")
	setBroken(false)
	w.say(ch.ID, "after the disk came back")
	r.waitFor("once the disk works again, messages are delivered", proto.ReceiveChat{ChannelID: ch.ID,
		Content: "after the disk came back", UserID: w.user.ID})
	var count int
	if err := e.openDB().QueryRow(`SELECT count(*) FROM chat_messages WHERE content = ?`, "lost to the disk").
		Scan(&count); err != nil || count != 0 {
		k.Fatalf("a message whose transaction failed: the database holds it %d times (err %v)", count, err)
	}
}
