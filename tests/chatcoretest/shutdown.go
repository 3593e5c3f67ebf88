package chatcoretest

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
	"serverlab/tools/given/lab"
)

// Shutdown checks exercise 7.7: who may stop the server, and how it stops.
// Shutdown (102) is refused to everyone but Config.Admins whose accounts
// existed when the server started (the original let any logged-in user stop
// it; a name on the list that anyone could register would be no better); an administrator's Shutdown, like Close,
// commits and delivers the messages in flight, tells every client "Server
// shutting down." (101), closes every connection and makes Serve return
// lab.ErrServerClosed. And the contract every server of the course keeps.
func Shutdown(t *testing.T, impl Impl) {
	k := testkit.New(t, "7.7")
	e := start(k, impl, Config{Admins: []string{"boss"}})

	check(k, e, "refused", func(k *testkit.T, e *env) {
		anon := e.dial("anon")
		anon.send(proto.Shutdown{})
		anon.expect("Shutdown without a session", proto.Error{Value: proto.MsgNotAuthorized})
		u := e.login("sd-user")
		u.settle()
		u.send(proto.Shutdown{})
		u.expect("Shutdown from a user who is not an administrator is refused (the original stopped for anyone)",
			proto.Error{Value: proto.MsgNotAllowed})
		u.expectAnswer("and the server goes on", u.sendGetChannels())
	})

	check(k, e, "registration-grants-no-admin", func(k *testkit.T, e *env) {
		// boss is on the list, but had no account when the server started:
		// whoever registers the name first must not get to stop the server
		// (on a fresh database, that would be any stranger).
		claimer := e.login("boss")
		claimer.settle()
		claimer.send(proto.Shutdown{})
		claimer.expect("Shutdown from a user who registered an administrator's name after the start (the list names "+
			"accounts the operator made; registration, open to anyone, must not grant the right)",
			proto.Error{Value: proto.MsgNotAllowed})
		claimer.expectAnswer("and the server goes on", claimer.sendGetChannels())
	})

	check(k, e, "add-user-admin", func(k *testkit.T, _ *env) { checkAddUserAdmin(k, impl) })

	check(k, e, "admin-shutdown", func(k *testkit.T, _ *env) {
		// The operator's way: the administrator's account exists before
		// the server that names it starts.
		e := start(k, impl, Config{})
		e.dial("the operator").register("boss")
		e.cfg.Admins = []string{"boss"}
		e.restart()
		boss := e.dial("boss")
		boss.authenticate("boss")
		other, anon := e.login("sd-other"), e.dial("sd-anon")
		// A round trip first: a connection still in the listen queue when
		// Close closes the listener is reset, not told, and is no client yet.
		anon.expectAnswer("a first request", anon.sendGetChannels())
		boss.send(proto.Shutdown{})
		notice := proto.Error{Value: proto.MsgShuttingDown}
		events := []proto.Type{proto.TypeUserLoginEvent, proto.TypeUserLogoutEvent}
		for _, c := range []*client{boss, other, anon} {
			c.waitFor("an administrator's Shutdown: every client is told", notice)
			c.expectClosed("then its connection is closed", testkit.IOTimeout, events...)
		}
		err, stopped := e.srv.Wait()
		if !stopped || !errors.Is(err, lab.ErrServerClosed) {
			k.Fatalf("after an administrator's Shutdown, Serve must return lab.ErrServerClosed; stopped %v, returned %v", stopped, err)
		}
	})

	// A connection whose client leaves just as Close starts must be ended
	// by one of the two: by disconnect if it left before Close took its
	// list of connections, by Close if it is on that list. A server that
	// decides outside its lock lets one slip between them: its writer waits
	// for ever, and so does Close. The race window is narrow, so the check
	// tries many times; a correct server passes every time.
	check(k, e, "close-while-clients-leave", func(k *testkit.T, _ *env) {
		const rounds, clients = 25, 8
		for range rounds {
			e := start(k, impl, Config{})
			cs := make([]*client, clients)
			for i := range cs {
				cs[i] = e.dial(fmt.Sprintf("sd-leaver-%d", i))
				cs[i].expectAnswer("a first request", cs[i].sendGetChannels())
			}
			// Close starts while the clients are still leaving, so that
			// some readers end before Close takes its list, some after.
			closed := make(chan struct{})
			for i, c := range cs {
				if i == clients/2 {
					go func() { e.srv.Close(); close(closed) }() // reports a Close that does not return in time
				}
				c.nc.Close()
			}
			<-closed
			if k.Failed() {
				return
			}
		}
	})

	check(k, e, "close-delivers-what-is-in-flight", func(k *testkit.T, _ *env) {
		e := start(k, impl, Config{})
		a := e.login("sd-writer")
		ch := a.createChannel("sd")
		a.join(ch.ID)
		const n = 30
		var frames []byte
		for i := range n {
			b, _ := proto.Encode(proto.WriteChat{Content: fmt.Sprintf("in flight %d", i)})
			frames = append(frames, b...)
		}
		a.write(frames, fmt.Sprintf("%d chat messages in one write", n))
		a.waitFor("the first message", proto.ReceiveChat{ChannelID: ch.ID, Content: "in flight 0", UserID: a.user.ID})
		closed := make(chan error, 1)
		go func() { closed <- e.raw.Close() }()
		echoed := []string{"in flight 0"}
		for {
			m, err := a.tryNext()
			if err != nil {
				k.Fatalf("during Close, the writer should get the echoes of what was committed, then %q, then end "+
					"of stream; got %s after %d echoes%s", proto.MsgShuttingDown, describe(err), len(echoed), a.context())
			}
			if rc, ok := m.(proto.ReceiveChat); ok {
				echoed = append(echoed, rc.Content)
				continue
			}
			if same(m, proto.Error{Value: proto.MsgShuttingDown}) {
				break
			}
		}
		a.expectClosed("after the notice, the connection is closed", testkit.IOTimeout)
		if err := <-closed; err != nil {
			k.Fatalf("Close: %v", err)
		}
		db := e.openDB()
		for _, content := range echoed {
			var count int
			if err := db.QueryRow(`SELECT count(*) FROM chat_messages WHERE content = ?`, content).Scan(&count); err != nil || count != 1 {
				k.Fatalf("%q was echoed before Close returned, but the database holds it %d times (err %v): "+
					"what was acknowledged must be stored", content, count, err)
			}
		}
	})

	check(k, e, "close-echoes-what-it-stored", func(k *testkit.T, _ *env) { checkCloseEchoesWhatItStored(k, impl) })
	check(k, e, "contract", func(k *testkit.T, _ *env) {
		dir := k.TempDir()
		n := 0
		k.CheckContract(testkit.Contract{
			New: func(log *slog.Logger) lab.Server {
				n++
				srv, err := impl.NewServer(Config{DBPath: filepath.Join(dir, fmt.Sprintf("c%d.db", n)), Logger: log})
				if err != nil {
					k.Fatalf("NewServer: %v", err)
				}
				return srv
			},
			Probe: func(k *testkit.T, addr string) {
				c := dialAddr(k, addr)
				c.expectAnswer("the probe", c.sendGetChannels())
			},
			Hold: func(k *testkit.T, addr string) {
				c := dialAddr(k, addr)
				c.register("holder")
				c.authenticate("holder")
			},
		})
	})
}

// dialAddr connects to addr for checks that have no env (the contract's).
func dialAddr(k *testkit.T, addr string) *client {
	k.Helper()
	nc := k.DialAddr(addr).NetConn()
	return &client{k: k, who: "client of " + addr, nc: nc, r: bufio.NewReader(nc)}
}
