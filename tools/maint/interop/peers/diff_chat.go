//go:build linux

// The byte-level comparison of the chat protocol: scenarios of frames sent by
// up to three clients, and the transcript of what every connection received.

package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"time"
)

// A chatStep is one action of a chat scenario: who sends what to which
// server (a new connection is made the first time a name is used).
type chatStep struct {
	who    string // connection name, e.g. "alice", "alice-reg"
	server string // "discovery" or "chat"
	frame  []byte
	expect int // events (frames, closes) that end the step when the server behaves as the original
}

type chatScenario struct {
	name  string
	steps []chatStep
}

// frame encodes a chat v1 frame byte for byte as the C struct would be
// sent: no validation, so hostile frames can be built.
func frame(typ int32, sender, target, payload string) []byte {
	return frameLen(typ, int32(len(payload)), sender, target, payload)
}

func frameLen(typ, n int32, sender, target, payload string) []byte {
	b := make([]byte, 72, 72+len(payload))
	binary.LittleEndian.PutUint32(b[0:], uint32(typ))
	binary.LittleEndian.PutUint32(b[4:], uint32(n))
	copy(b[8:39], sender)
	copy(b[40:71], target)
	return append(b, payload...)
}

const (
	tReg, tLogin, tBroadcast, tPrivate, tQuery, tStatus = 1, 2, 3, 4, 5, 6
)

// reg registers: one answer, then the discovery server closes.
func reg(who, user, pw string) chatStep {
	return chatStep{who, "discovery", frame(tReg, user, "", pw), 2}
}

// login logs in: one answer (and a close after FAIL).
func login(user, pw string) chatStep { return chatStep{user, "chat", frame(tLogin, user, "", pw), 1} }

func loginFails(user, pw string) chatStep {
	return chatStep{user, "chat", frame(tLogin, user, "", pw), 2}
}

// send is a frame from a logged-in (or not) connection that should cause
// expect events.
func send(who string, expect int, f []byte) chatStep { return chatStep{who, "chat", f, expect} }

// loggedIn registers and logs in each user.
func loggedIn(users ...string) []chatStep {
	var s []chatStep
	for _, u := range users {
		s = append(s, reg(u+"-reg", u, "pw"))
	}
	for _, u := range users {
		s = append(s, login(u, "pw"))
	}
	return s
}

func with(pre []chatStep, more ...chatStep) []chatStep {
	return append(append([]chatStep{}, pre...), more...)
}

var chatScenarios = []chatScenario{
	{"register", []chatStep{reg("a", "alice", "pw")}},
	{"register-again", []chatStep{reg("a1", "alice", "pw"), reg("a2", "alice", "pw")}},
	{"register-other-password", []chatStep{reg("a1", "alice", "pw"), reg("a2", "alice", "stolen")}},
	{"login", loggedIn("alice")},
	{"login-bad-password", []chatStep{reg("a", "alice", "pw"), loginFails("alice", "wrong")}},
	{"login-unknown", []chatStep{loginFails("nobody", "pw")}},
	{"frame-before-login", []chatStep{send("x", 1, frame(tBroadcast, "x", "all", "hi"))}},
	{"broadcast-all", with(loggedIn("alice", "bob", "carol"), send("alice", 2, frame(tBroadcast, "alice", "all", "hi all")))},
	{"broadcast-spoofed", with(loggedIn("alice", "bob"), send("alice", 1, frame(tBroadcast, "mallory", "all", "it was me")))},
	{"private", with(loggedIn("alice", "bob", "carol"), send("alice", 1, frame(tPrivate, "alice", "bob", "psst")))},
	{"private-offline", with(loggedIn("alice"), send("alice", 1, frame(tPrivate, "alice", "carol", "hello?")))},
	{"query-users", with(loggedIn("alice", "bob"), send("alice", 1, frame(tQuery, "alice", "", "")))},
	{"status-update", with(loggedIn("alice", "bob"), send("alice", 0, frame(tStatus, "alice", "", "away")))},
	{"payload-over-64KiB", with(loggedIn("alice", "bob"), send("alice", 1, frame(tBroadcast, "alice", "all", strings.Repeat("x", 70000))))},
}

// chatRules are the chat protocol's deliberate differences.
var chatRules = []rule{
	{proto: "chat", probes: []string{"register-other-password"}, why: "duplicate-name refusal (another password gets FAIL)",
		ok: transcriptIs([]string{`a2 <- type=1 sender="server" target="alice" payload="OK"`},
			[]string{`a2 <- type=1 sender="server" target="alice" payload="FAIL"`})},
	{proto: "chat", probes: []string{"broadcast-spoofed"}, why: "sender fix (the authenticated name)",
		ok: transcriptIs([]string{`bob <- type=3 sender="mallory" target="all" payload="it was me"`},
			[]string{`bob <- type=3 sender="alice" target="all" payload="it was me"`})},
	{proto: "chat", probes: []string{"payload-over-64KiB"}, why: "64 KiB payload cap (the sender is disconnected)",
		ok: func(orig, ours reply) bool {
			a, b := transcriptDiff(lines(orig.data), lines(ours.data))
			return len(a) == 1 && strings.HasPrefix(a[0], `bob <- type=3 sender="alice" target="all" payload=<70000 bytes>`) &&
				equalLists(b, []string{"alice: closed"})
		}},
}

// diffChat plays each scenario against the original pair (discovery_server +
// srv) and against chapter 01 + chapter ch, on the fixed ports, and compares
// the transcripts.
func diffChat(srv, ch string) func(context.Context, *harness) (string, error) {
	return func(ctx context.Context, h *harness) (string, error) {
		var vs []verdict
		for _, sc := range chatScenarios {
			var got [2]reply
			for i := range got {
				var c *chatPair
				var err error
				if i == 0 {
					c, err = h.startOrigChat(ctx, srv)
				} else {
					c, err = h.startOurChat(ctx, ch)
				}
				if err != nil {
					return "", err
				}
				got[i] = reply{data: []byte(strings.Join(playChat(sc), "\n") + "\n")}
				c.stop()
			}
			vs = append(vs, judge("chat", sc.name, describeSteps(sc), got[0], got[1], identity, chatRules))
		}
		return h.verdicts(vs)
	}
}

// describeSteps is a scenario as "sent": who sent which frame to which
// server, in order.
func describeSteps(sc chatScenario) string {
	var parts []string
	for _, s := range sc.steps {
		typ := binary.LittleEndian.Uint32(s.frame[0:])
		n := int32(binary.LittleEndian.Uint32(s.frame[4:]))
		payload := string(s.frame[72:])
		switch {
		case typ == tReg:
			parts = append(parts, fmt.Sprintf("REG %s/%s", cstr(s.frame[8:40]), payload))
		case typ == tLogin:
			parts = append(parts, fmt.Sprintf("LOGIN %s/%s", cstr(s.frame[8:40]), payload))
		default:
			if len(payload) > 20 {
				payload = payload[:20] + "…"
			}
			parts = append(parts, fmt.Sprintf("%s: type=%d sender=%q target=%q len=%d payload=%q",
				s.who, typ, cstr(s.frame[8:40]), cstr(s.frame[40:72]), n, payload))
		}
	}
	return strings.Join(parts, "; ")
}

// playChat runs a scenario and returns its transcript: after each step,
// everything every connection received (or its close) until the servers
// have been quiet for 150 ms, sorted within the step.
func playChat(sc chatScenario) []string {
	conns := map[string]*chatConn{}
	var transcript []string
	for i, st := range sc.steps {
		c, ok := conns[st.who]
		if !ok {
			addr := chatAddr
			if st.server == "discovery" {
				addr = discoveryAddr
			}
			nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
			if err != nil {
				transcript = append(transcript, fmt.Sprintf("step %d: %s cannot connect: %v", i+1, st.who, err))
				continue
			}
			c = newChatConn(st.who, nc)
			conns[st.who] = c
		}
		_ = c.nc.SetWriteDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.nc.Write(st.frame); err != nil {
			transcript = append(transcript, st.who+": write failed")
		}
		transcript = append(transcript, settle(conns, st.expect)...)
	}
	for _, c := range conns {
		c.nc.Close()
		<-c.done
	}
	return transcript
}

// chatConn reads frames from one connection into an event list.
type chatConn struct {
	who    string
	nc     net.Conn
	mu     sync.Mutex
	events []string
	last   time.Time
	done   chan struct{}
}

func newChatConn(who string, nc net.Conn) *chatConn {
	c := &chatConn{who: who, nc: nc, done: make(chan struct{}), last: time.Now()}
	go c.read()
	return c
}

func (c *chatConn) read() {
	defer close(c.done)
	var buf []byte
	tmp := make([]byte, 32<<10)
	for {
		n, err := c.nc.Read(tmp)
		buf = append(buf, tmp[:n]...)
		for {
			ev, rest, ok := decodeEvent(buf)
			if !ok {
				break
			}
			buf = rest
			c.add(c.who + " <- " + ev)
		}
		if err != nil {
			if len(buf) > 0 {
				c.add(fmt.Sprintf("%s <- %d bytes that are not a whole frame", c.who, len(buf)))
			}
			if !errors.Is(err, net.ErrClosed) {
				c.add(c.who + ": closed")
			}
			return
		}
	}
}

func (c *chatConn) add(ev string) {
	c.mu.Lock()
	c.events = append(c.events, ev)
	c.last = time.Now()
	c.mu.Unlock()
}

func (c *chatConn) take() (evs []string, last time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	evs, c.events = c.events, nil
	return evs, c.last
}

// settle collects what the connections receive after a step: it waits for
// the events the step should cause, then until nothing more has arrived
// for 100 ms (so extra events are caught); a server that sends fewer is
// given 2 s. The events are sorted: deliveries to several clients race.
func settle(conns map[string]*chatConn, expect int) []string {
	start := time.Now()
	var evs []string
	for {
		latest := start
		for _, c := range conns {
			e, last := c.take()
			evs = append(evs, e...)
			if last.After(latest) {
				latest = last
			}
		}
		idle := time.Since(latest) > 100*time.Millisecond
		if idle && (len(evs) >= expect || time.Since(start) > 2*time.Second) || time.Since(start) > 5*time.Second {
			sort.Strings(evs)
			return evs
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// decodeEvent decodes one frame from b as an event line; ok is false if b
// does not hold a whole frame yet.
func decodeEvent(b []byte) (ev string, rest []byte, ok bool) {
	if len(b) < 72 {
		return "", b, false
	}
	typ := int32(binary.LittleEndian.Uint32(b[0:]))
	n := int32(binary.LittleEndian.Uint32(b[4:]))
	if n < 0 || n > 1<<24 {
		return fmt.Sprintf("type=%d bad payload_length %d", typ, n), nil, true
	}
	if len(b) < 72+int(n) {
		return "", b, false
	}
	payload := string(b[72 : 72+n])
	p := fmt.Sprintf("%q", payload)
	if len(payload) > 200 {
		p = fmt.Sprintf("<%d bytes>", len(payload))
	}
	return fmt.Sprintf("type=%d sender=%q target=%q payload=%s", typ, cstr(b[8:40]), cstr(b[40:72]), p), b[72+n:], true
}

// cstr is a NUL-terminated name field.
func cstr(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
