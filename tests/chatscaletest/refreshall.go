package chatscaletest

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// sessionKeys is the subject prefix of the session keys' writes.
const sessionKeys = "$KV." + sessionsBucket + ".s."

// frameHook is what a check of the session keeper asks of the proxy: count
// the writes of each session key, fail every write of one key (its answer
// turned into an error of the stream), or stall every link once a write is
// answered "wrong last sequence" (a revision conflict).
type frameHook struct {
	writes          map[string]int    // session key subject → writes seen
	replies         map[string]string // reply subject → the key written
	failKey         string            // writes of this key are answered with an error
	stallOnConflict bool
	stallOnWrite    bool                 // the next session key write stalls every link, and is lost (stallwrite.go)
	failDirect      func(directReq) bool // direct gets of the stream it picks are answered with an error (historyfails.go)
	stalledAt       chan time.Time       // gets the time of the stall, once
	drop            string               // requests on subjects with this prefix are dropped
	notFound        string               // requests on subjects with this prefix are answered 404 (replicastale.go)
	staleBatch      string               // batched direct gets on this prefix lose hideSeq, once (replicastale.go)
	hideSeq         string
}

// setHook makes h see every frame from now on.
func (p *ackDropper) setHook(h *frameHook) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h.writes, h.replies = map[string]int{}, map[string]string{}
	p.hook = h
}

// keyWrites returns the writes of each session key seen since setHook.
func (p *ackDropper) keyWrites() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int{}
	for k, n := range p.hook.writes {
		out[k] = n
	}
	return out
}

// hookClient notes a session key's write and the subject of its answer,
// and reports whether the frame is to be dropped.
func (p *ackDropper) hookClient(f frame) (drop bool) {
	if (f.op != "PUB" && f.op != "HPUB") || len(f.args) < 2 {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.hook
	if h == nil {
		return false
	}
	if h.drop != "" && strings.HasPrefix(f.args[0], h.drop) {
		return true
	}
	if h.notFound != "" && strings.HasPrefix(f.args[0], h.notFound) && (f.op == "PUB" && len(f.args) == 3 || f.op == "HPUB" && len(f.args) == 4) {
		h.replies[f.args[1]] = notFoundReply
		return false
	}
	if h.staleBatch != "" && strings.HasPrefix(f.args[0], h.staleBatch) && isBatch(f) && (f.op == "PUB" && len(f.args) == 3 || f.op == "HPUB" && len(f.args) == 4) {
		h.replies[f.args[1]] = staleReply
		return false
	}
	p.markFailedLocked(h, f)
	if !strings.HasPrefix(f.args[0], sessionKeys) {
		return false
	}
	if p.stallOnWriteLocked(h) {
		return true
	}
	h.writes[f.args[0]]++
	if f.op == "PUB" && len(f.args) == 3 || f.op == "HPUB" && len(f.args) == 4 {
		h.replies[f.args[1]] = f.args[0]
	}
	return false
}

// hookNode answers a write of failKey with an error (the write was stored:
// only its answer changes), and stalls every link after it forwards a
// revision conflict if stallOnConflict is set.
func (p *ackDropper) hookNode(f frame) ([]byte, bool) {
	if (f.op != "MSG" && f.op != "HMSG") || len(f.args) < 3 {
		return nil, false
	}
	p.mu.Lock()
	h := p.hook
	if h == nil {
		p.mu.Unlock()
		return nil, false
	}
	key, ok := h.replies[f.args[0]]
	if key == failReply || key == failedReply {
		out, taken := failAnswer(f, h)
		p.mu.Unlock()
		return out, taken
	}
	if key == staleReply {
		out, taken := staleAnswer(f, h)
		p.mu.Unlock()
		return out, taken
	}
	delete(h.replies, f.args[0])
	fail := ok && key == h.failKey
	stall := ok && h.stallOnConflict && bytes.Contains(f.body, []byte(`"err_code":10071`))
	if stall {
		h.stallOnConflict = false
	}
	p.mu.Unlock()
	switch {
	case ok && key == notFoundReply:
		hdr := "NATS/1.0 404 Message Not Found\r\n\r\n"
		return fmt.Appendf(nil, "HMSG %s %s %d %d\r\n%s\r\n", f.args[0], f.args[1], len(hdr), len(hdr), hdr), true
	case fail:
		body := `{"error":{"code":503,"err_code":10008,"description":"the suite's proxy failed this write"}}`
		return fmt.Appendf(nil, "MSG %s %s %d\r\n%s\r\n", f.args[0], f.args[1], len(body), body), true
	case stall:
		p.stall() // this answer still goes through: the pumps check the link before this frame
		h.stalledAt <- time.Now()
		return f.raw, true
	}
	return nil, false
}

// refreshGoesOn checks that one session key the server cannot write costs
// that key only: the proxy answers every write of fay's key with an error,
// and the keys of the five other users of the server must still be written
// at every refresh. A refresh that stops at its first failure leaves the
// keys after it (in the map's order) unwritten: they expire, and their
// users may log in on another server while still logged in here.
func refreshGoesOn(k *testkit.T, impl Impl) {
	k.Helper()
	n := startNATS(k)
	proxy := startAckDropper(k, n.url())
	cfg := baseConfig(k, proxy.url())
	cfg.SessionTTL = scaled(1500 * time.Millisecond) // a refresh every 500 ms
	srv := serve(k, impl, "F", cfg)
	names := []string{"fay", "gil", "hal", "ida", "jon", "kim"}
	keys := map[string]string{}
	var clients []*client
	for _, name := range names {
		c := srv.dial(name)
		c.newUser(name)
		clients = append(clients, c)
		keys[name] = sessionKeys + strconv.FormatUint(uint64(c.user.ID), 10)
	}
	proxy.setHook(&frameHook{failKey: keys["fay"]})

	const rounds = 8
	deadline := time.Now().Add(testkit.IOTimeout + (rounds+2)*cfg.SessionTTL/3)
	tick := time.NewTicker(cfg.SessionTTL / 6) // paces the looks at the proxy's count
	defer tick.Stop()
	for proxy.keyWrites()[keys["fay"]] < rounds {
		if time.Now().After(deadline) {
			k.Fatalf("server F wrote fay's session key %d times in %v (the TTL is %v: a refresh every TTL/3, and each tries every key); want %d",
				proxy.keyWrites()[keys["fay"]], time.Since(deadline.Add(-testkit.IOTimeout-(rounds+2)*cfg.SessionTTL/3)).Round(time.Millisecond), cfg.SessionTTL, rounds)
		}
		<-tick.C
	}
	writes := proxy.keyWrites()
	tried := writes[keys["fay"]]
	var short []string
	for _, name := range names[1:] {
		if got := writes[keys[name]]; got < tried-2 {
			short = append(short, fmt.Sprintf("%s %d", name, got))
		}
	}
	if len(short) > 0 {
		k.Fatalf("server F refreshes six sessions; the suite's proxy answers every write of fay's key (%s) with an error\n"+
			"sent: 6 logins on server F, then nothing (SessionTTL %v: a refresh every %v)\nwant: every other key written at each refresh too: %d times or more while fay's was tried %d times\ngot:  %s (writes of each key: %v)\n"+
			"likely cause: a refresh stops at the first key it fails to write: the keys after it go unwritten, expire, and their users can log in on another server while still logged in here; note the error and go on to the next key%s",
			keys["fay"], cfg.SessionTTL, cfg.SessionTTL/3, tried-2, tried, strings.Join(short, ", "), writes, clients[0].context())
	}
}

// recreateWithoutLock checks that the session keeper holds the server's
// mutex across none of its writes — the create of a key it found gone or
// moved included, not only the update refreshWithoutLock times: bob's key
// is written by the suite (a revision the server does not hold), and once
// NATS answers the server's update "wrong last sequence" the proxy stalls
// the link, so that the create after it hangs until the request timeout.
// All along, alice's GetChannels (no NATS needed) is answered at once.
func recreateWithoutLock(k *testkit.T, impl Impl) {
	k.Helper()
	n := startNATS(k)
	obs := observe(k, n.url())
	proxy := startAckDropper(k, n.url())
	cfg := baseConfig(k, proxy.url())
	cfg.SessionTTL = 900 * time.Millisecond // a refresh every 300 ms
	cfg.RequestTimeout = scaled(2 * time.Second)
	p := serve(k, impl, "P", cfg)
	alice, bob := p.dial("alice"), p.dial("bob")
	alice.newUser("alice")
	bob.newUser("bob")

	h := &frameHook{stallOnConflict: true, stalledAt: make(chan time.Time, 1)}
	proxy.setHook(h)
	obs.putSession(bob.user.ID)
	var stalled time.Time
	select {
	case stalled = <-h.stalledAt:
	case <-time.After(testkit.IOTimeout + 2*cfg.SessionTTL):
		k.Fatalf("server P did not write bob's session key within %v after the suite wrote it (the TTL is %v: a refresh every TTL/3)", testkit.IOTimeout+2*cfg.SessionTTL, cfg.SessionTTL)
	}
	slow := scaled(time.Second)
	for time.Since(stalled) < cfg.RequestTimeout+cfg.SessionTTL {
		start := time.Now()
		req := proto.GetChannelsRequest{RequestID: alice.id()}
		got := alice.call(req)
		if _, ok := got.(proto.GetChannelsResponse); !ok {
			k.Fatalf("%s: GetChannels while the link to NATS stalls\nsent: %s\nwant: 120 (the channels are in the server's memory)\ngot:  %s%s", alice.who, show(req), show(got), alice.context())
		}
		if took := time.Since(start); took > slow {
			k.Fatalf("%s: GetChannels, %v after a refresh of bob's session key met a revision it did not hold (the suite wrote the key) and the link to NATS stalled\nsent: %s\nwant: 120 at once (under %v)\ngot:  120 after %v\n"+
				"likely cause: the session keeper holds the server's mutex across the create it tries after a revision conflict: while the create waits for NATS (up to the request timeout, %v) no client of the server is answered; check the session under the mutex, write without it%s",
				alice.who, start.Sub(stalled).Round(time.Millisecond), show(req), slow, took.Round(time.Millisecond), cfg.RequestTimeout, alice.context())
		}
	}
}
