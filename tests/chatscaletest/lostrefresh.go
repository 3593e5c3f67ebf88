package chatscaletest

import (
	"strconv"
	"strings"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// armFor makes the next publish on a subject that starts with prefix (a
// bucket's: "$KV.chat_sessions.") lose its acknowledgement, as arm does for
// the stream's chat messages.
func (p *ackDropper) armFor(prefix string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.other, p.tries = prefix, nil
}

// takeOther takes f as the target if armFor's prefix names its subject and
// it has a reply subject (fromClient calls it for every frame).
func (p *ackDropper) takeOther(f frame) {
	if (f.op != "PUB" && f.op != "HPUB") || len(f.args) < 2 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.other == "" || !strings.HasPrefix(f.args[0], p.other) {
		return
	}
	if f.op == "PUB" && len(f.args) == 3 || f.op == "HPUB" && len(f.args) == 4 {
		p.other, p.target = "", f.args[1]
		p.tries = append(p.tries, pubTry{subject: f.args[0], reply: f.args[1]})
	}
}

// lostRefresh checks that a lone server keeps its sessions when one
// refresh's reply is lost (the attackers' "false takeover"): the key was
// written, at a revision the server never heard of, so the next refresh
// finds it at another revision than the lease. Its value still names this
// server: the server adopts the revision. Ending the session there told
// the users of a server alone in its NATS that "another server" had taken
// them over.
func lostRefresh(k *testkit.T, impl Impl) {
	k.Helper()
	n := startNATS(k)
	obs := observe(k, n.url())
	proxy := startAckDropper(k, n.url())
	cfg := baseConfig(k, proxy.url())
	cfg.SessionTTL = scaled(3 * time.Second)
	cfg.RequestTimeout = scaled(500 * time.Millisecond) // a refresh gives up on its lost reply before the next
	l := serve(k, impl, "L", cfg)
	erin := l.dial("erin")
	erin.newUser("erin")
	key := "s." + strconv.FormatUint(uint64(erin.user.ID), 10)

	proxy.armFor("$KV." + sessionsBucket + "." + key)
	if _, _, ok := proxy.waitDropped(testkit.IOTimeout + cfg.SessionTTL); !ok {
		k.Fatalf("server L refreshed erin's session key %s no time within %v (the TTL is %v: a refresh every TTL/3)", key, testkit.IOTimeout+cfg.SessionTTL, cfg.SessionTTL)
	}
	dropped := obs.sessionRevision(erin.user.ID) // the refresh was stored; L never heard so

	// The next refreshes must write the key again (after adopting its
	// revision), and erin must stay logged in meanwhile.
	deadline := time.Now().Add(testkit.IOTimeout + 2*cfg.SessionTTL)
	tick := time.NewTicker(cfg.SessionTTL / 6)
	defer tick.Stop()
	for rev := dropped; rev <= dropped; rev = obs.sessionRevision(erin.user.ID) {
		if time.Now().After(deadline) {
			k.Fatalf("server L, alone in its NATS, did not refresh erin's session key %s again within %v after one refresh's reply was lost (the key is at revision %d, which names L; L's lease is the revision before)\n"+
				"want: the key written again: on a revision conflict read the key, and adopt its revision if it names this server\n"+
				"got:  no write (the session was ended as \"taken over by another server\"?)%s", key, testkit.IOTimeout+2*cfg.SessionTTL, dropped, erin.context())
		}
		<-tick.C
	}
	id := erin.id()
	got := erin.call(proto.GetUserRequest{Name: "erin", RequestID: id})
	if r, ok := got.(proto.GetUserResponse); !ok || r.User.ID != erin.user.ID {
		k.Fatalf("%s: GetUser erin after a refresh's reply was lost, on a server alone in its NATS\nwant: 114 (still logged in: the key names this server)\ngot:  %s%s", erin.who, show(got), erin.context())
	}
}
