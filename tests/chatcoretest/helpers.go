package chatcoretest

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite" // to look at what the server stored

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
	"serverlab/tools/given/lab"
)

// env is one server under test.
type env struct {
	k      *testkit.T
	impl   Impl
	cfg    Config
	srv    *testkit.Server
	raw    lab.Server
	tls    *tls.Config // the client's, when the server speaks TLS
	before string      // what the check needs working first, for messages
	// answered is set once the server answered the env's first request
	// (probe): the note in before is said only until then (needs.go).
	// Shared by the copies e.on makes for subtests.
	answered *atomic.Bool
	// listen, if set, makes the listener the server serves on (default:
	// testkit's, with the kernel's usual buffers).
	listen func(k *testkit.T) net.Listener
}

// start serves a new server on a fresh database (unless cfg names one).
func start(k *testkit.T, impl Impl, cfg Config) *env {
	k.Helper()
	return startOn(k, impl, cfg, nil)
}

// startOn is start on the listeners that listen makes (nil: testkit's).
func startOn(k *testkit.T, impl Impl, cfg Config, listen func(k *testkit.T) net.Listener) *env {
	k.Helper()
	if cfg.DBPath == "" {
		cfg.DBPath = filepath.Join(k.TempDir(), "chat.db")
	}
	if cfg.Logger == nil {
		cfg.Logger = testkit.Logger()
	}
	e := &env{k: k, impl: impl, cfg: cfg, listen: listen, answered: new(atomic.Bool)}
	if cfg.TLS != nil {
		e.tls = &tls.Config{InsecureSkipVerify: true} // the check's own self-signed certificate
	}
	switch ex := k.Exercise(); {
	case strings.HasSuffix(ex, ".1"):
	case strings.HasSuffix(ex, ".2"):
		e.before = "\n(this check needs the read loop of the first exercise, Serve and frames, to work)"
	default:
		e.before = "\n(this check needs the earlier exercises — frames, users and sessions, channels — to work)"
	}
	e.serve()
	return e
}

func (e *env) serve() {
	e.k.Helper()
	srv, err := e.impl.NewServer(e.cfg)
	if errors.Is(err, lab.ErrNotImplemented) {
		e.k.Fatalf("building the server needs an earlier exercise: %v", err)
	}
	if err != nil {
		e.k.Fatalf("NewServer: %v", err)
	}
	if e.listen != nil {
		e.raw, e.srv = srv, e.k.ServeListener(srv, e.listen(e.k))
	} else {
		e.raw, e.srv = srv, e.k.Serve(srv)
	}
	e.probe()
}

// probe waits until the server answers, so that what Serve starts has
// started before a check looks for leaked goroutines.
func (e *env) probe() {
	e.k.Helper()
	c := e.dial("the suite's first connection")
	defer c.nc.Close()
	c.expectAnswer("the server answers a first request", c.sendGetChannels())
	e.answered.Store(true)
}

// restart closes the server and serves a new one on the same database.
func (e *env) restart() {
	e.k.Helper()
	e.srv.Close()
	e.serve()
}

// client is one connection of a check, speaking proto. Every wait has a
// deadline; it remembers what it sent, and keeps the messages that a wait
// for something else read past (backlog), in order.
type client struct {
	k       *testkit.T
	e       *env
	who     string
	nc      net.Conn
	r       *bufio.Reader
	sent    []string
	backlog []proto.Message
	nextID  uint64
	user    proto.User // set by login
}

// dial opens a connection (TLS if the server speaks it). who names it in
// messages.
func (e *env) dial(who string) *client {
	e.k.Helper()
	return e.dialTLS(who, e.tls)
}

// dialSmallWindow opens a plain connection whose receive buffer is small
// from before it connects (see smallReceiveBuffer).
func (e *env) dialSmallWindow(who string) *client {
	e.k.Helper()
	d := net.Dialer{Timeout: testkit.IOTimeout, Control: func(_, _ string, c syscall.RawConn) error {
		return smallReceiveBuffer(c)
	}}
	nc, err := d.Dial("tcp", e.srv.Addr)
	if err != nil {
		e.k.Fatalf("dial %s: %v", e.srv.Addr, err)
	}
	e.k.OnAbort(func() { nc.Close() })
	e.k.Cleanup(func() { nc.Close() })
	return &client{k: e.k, e: e, who: who, nc: nc, r: bufio.NewReader(nc)}
}

// dialTLS opens a connection, with TLS if tc is not nil.
func (e *env) dialTLS(who string, tc *tls.Config) *client {
	e.k.Helper()
	nc := e.k.Dial(e.srv).NetConn()
	if tc != nil {
		nc = tls.Client(nc, tc)
	}
	return &client{k: e.k, e: e, who: who, nc: nc, r: bufio.NewReader(nc)}
}

func (c *client) id() uint64 {
	c.nextID++
	return c.nextID
}

func (c *client) remember(what string) {
	c.sent = append(c.sent, what)
	if len(c.sent) > 8 {
		c.sent = c.sent[len(c.sent)-8:]
	}
}

// context is the standard end of a failure message.
func (c *client) context() string {
	s := "\n  " + c.who + " sent: "
	if len(c.sent) == 0 {
		s += "(nothing)"
	} else {
		s += strings.Join(c.sent, "\n      ")
	}
	if c.e == nil {
		return s
	}
	if err, stopped := c.e.srv.Stopped(); stopped {
		s += fmt.Sprintf("\n(the server is not running: Serve returned %v)", err)
	}
	return s + c.needsNote()
}

// show formats a message for failure output.
func show(m proto.Message) string {
	if m == nil {
		return "(nothing)"
	}
	s := fmt.Sprintf("%d %+v", m.Type(), m)
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// send writes m in one write.
func (c *client) send(m proto.Message) {
	c.k.Helper()
	b, err := proto.Encode(m)
	if err != nil {
		c.k.Fatalf("test bug: encode %s: %v", show(m), err)
	}
	c.write(b, show(m))
}

// write writes raw bytes.
func (c *client) write(b []byte, describe string) {
	c.k.Helper()
	if err := c.tryWrite(b, describe); err != nil {
		c.k.Fatalf("%s: writing %s: %v%s", c.who, describe, err, c.context())
	}
}

func (c *client) tryWrite(b []byte, describe string) error {
	c.remember(describe)
	c.nc.SetWriteDeadline(time.Now().Add(testkit.IOTimeout))
	_, err := c.nc.Write(b)
	return err
}

// body frames a raw body.
func body(s string) []byte {
	return append([]byte{byte(len(s) >> 24), byte(len(s) >> 16), byte(len(s) >> 8), byte(len(s))}, s...)
}

// tryNext returns the next message: from the backlog, or from the socket.
func (c *client) tryNext() (proto.Message, error) {
	if len(c.backlog) > 0 {
		m := c.backlog[0]
		c.backlog = c.backlog[1:]
		return m, nil
	}
	c.nc.SetReadDeadline(time.Now().Add(testkit.IOTimeout))
	return proto.Read(c.r)
}

// next returns the next message or fails the check.
func (c *client) next(why string) proto.Message {
	c.k.Helper()
	m, err := c.tryNext()
	if err != nil {
		c.k.Fatalf("%s: %s should receive a message, got %s%s", why, c.who, describe(err), c.context())
	}
	return m
}

// describe is testkit.Describe, plus what a frame that did not decode was.
func describe(err error) string {
	if errors.Is(err, proto.ErrMalformed) || errors.Is(err, proto.ErrUnknownType) {
		return "a frame that does not decode: " + err.Error()
	}
	return testkit.Describe(err)
}

// same reports whether two messages encode to the same bytes.
func same(a, b proto.Message) bool {
	x, err1 := proto.Encode(a)
	y, err2 := proto.Encode(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// expect checks that the next messages are want, in this order.
func (c *client) expect(why string, want ...proto.Message) {
	c.k.Helper()
	for i, w := range want {
		got, err := c.tryNext()
		if err != nil {
			c.k.Fatalf("%s: %s should receive (message %d of %d)\n  want: %s\n   got: %s%s",
				why, c.who, i+1, len(want), show(w), describe(err), c.context())
		}
		if !same(got, w) {
			c.k.Fatalf("%s: %s received the wrong message (message %d of %d)\n  want: %s\n   got: %s%s",
				why, c.who, i+1, len(want), show(w), show(got), c.context())
		}
	}
}

// waitFor reads until want arrives, keeping what came before it in the
// backlog (in order) for later checks.
func (c *client) waitFor(why string, want proto.Message) {
	c.k.Helper()
	var skipped []proto.Message
	for i, m := range c.backlog {
		if same(m, want) {
			c.backlog = append(c.backlog[:i:i], c.backlog[i+1:]...)
			return
		}
	}
	skipped, c.backlog = c.backlog, nil
	for {
		c.nc.SetReadDeadline(time.Now().Add(testkit.IOTimeout))
		m, err := proto.Read(c.r)
		if err != nil {
			c.backlog = skipped
			c.k.Fatalf("%s: %s should receive\n  want: %s\n   got: %s (after %d other messages%s)%s",
				why, c.who, show(want), describe(err), len(skipped), lastOf(skipped), c.context())
		}
		if same(m, want) {
			c.backlog = skipped
			return
		}
		if why := notImplemented(m); why != "" {
			c.k.Fatalf("%s: %s should receive\n  want: %s\n   got: %s%s", why, c.who, show(want), why, c.context())
		}
		skipped = append(skipped, m)
	}
}

// notImplemented returns the error text of m if it is an error answer that
// says a stub was called ("… not implemented"), so that a check fails at
// once instead of waiting for what cannot come.
func notImplemented(m proto.Message) string {
	var v string
	switch m := m.(type) {
	case proto.Error:
		v = m.Value
	case proto.ErrorResponse:
		v = m.Value
	}
	if strings.HasSuffix(v, lab.ErrNotImplemented.Error()) {
		return "the server answered " + strconv.Quote(v)
	}
	return ""
}

func lastOf(ms []proto.Message) string {
	if len(ms) == 0 {
		return ""
	}
	return ", the last: " + show(ms[len(ms)-1])
}

// call sends a request and returns its answer (its response type, or a 100
// with its request_id); what arrives before it goes to the backlog.
func (c *client) call(req proto.Requester) proto.Message {
	c.k.Helper()
	c.send(req)
	var skipped []proto.Message
	for {
		m, err := c.tryNext()
		if err != nil {
			c.backlog = append(skipped, c.backlog...)
			c.k.Fatalf("%s: want an answer to request %d, got %s (after %d other messages%s)%s",
				c.who, req.Request(), describe(err), len(skipped), lastOf(skipped), c.context())
		}
		if r, ok := m.(proto.Requester); ok && r.Request() == req.Request() &&
			(m.Type() == proto.ResponseType[req.Type()] || m.Type() == proto.TypeErrorResponse) {
			c.backlog = append(skipped, c.backlog...)
			return m
		}
		skipped = append(skipped, m)
	}
}

// callExpect calls and checks the answer.
func (c *client) callExpect(why string, req proto.Requester, want proto.Message) {
	c.k.Helper()
	got := c.call(req)
	if !same(got, want) {
		c.k.Fatalf("%s: %s got the wrong answer\n  want: %s\n   got: %s%s", why, c.who, show(want), show(got), c.context())
	}
}

// settle makes a round trip and forgets everything that arrived before its
// answer: afterwards, the next message is one caused after this point.
func (c *client) settle() {
	c.k.Helper()
	c.call(proto.GetChannelsRequest{RequestID: c.id()})
	c.backlog = nil
}

// expectNothing checks, with a round trip, that nothing arrived: the
// answer to a fresh request must be the next message.
func (c *client) expectNothing(why string) {
	c.k.Helper()
	id := c.id()
	c.send(proto.GetChannelsRequest{RequestID: id})
	m, err := c.tryNext()
	if err != nil {
		c.k.Fatalf("%s: %s: want the answer to request %d, got %s%s", why, c.who, id, describe(err), c.context())
	}
	if r, ok := m.(proto.Requester); !ok || r.Request() != id {
		c.k.Fatalf("%s: %s should have received nothing, but got\n   %s%s", why, c.who, show(m), c.context())
	}
}

// expectClosed checks that the server closes the connection, possibly after
// sending the messages in allow (by type), within d.
func (c *client) expectClosed(why string, d time.Duration, allow ...proto.Type) {
	c.k.Helper()
	deadline := time.Now().Add(d)
	for _, m := range c.backlog {
		if !typeIn(m.Type(), allow) {
			c.k.Fatalf("%s: %s should have been closed, but first got %s%s", why, c.who, show(m), c.context())
		}
	}
	c.backlog = nil
	for {
		c.nc.SetReadDeadline(deadline)
		m, err := proto.Read(c.r)
		switch {
		case err == nil && typeIn(m.Type(), allow):
			continue
		case err == nil:
			c.k.Fatalf("%s: %s should have been closed, but got %s%s", why, c.who, show(m), c.context())
		case testkit.IsClosed(err) || errors.Is(err, net.ErrClosed):
			return
		case isTimeout(err):
			c.k.Fatalf("%s: %s should have been closed within %v, but the connection stayed open%s", why, c.who, d, c.context())
		default:
			return // a TLS alert or similar: closed all the same
		}
	}
}

func typeIn(t proto.Type, ts []proto.Type) bool {
	for _, x := range ts {
		if t == x {
			return true
		}
	}
	return false
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// password is the password the suite uses for name.
func password(name string) string { return "pw-" + name + "-secret" }

// register creates a user on c and returns it.
func (c *client) register(name string) proto.User {
	c.k.Helper()
	m := c.call(proto.CreateUserRequest{RequestID: c.id(), Name: name, Password: password(name)})
	r, ok := m.(proto.CreateUserResponse)
	if !ok || r.User.Name != name || r.User.ID == 0 {
		c.k.Fatalf("creating user %q: want 110 {request_id, user:{id, name:%q}} with an id > 0, got %s%s",
			name, name, show(m), c.stepFailed("7.2", "users and sessions"))
	}
	return r.User
}

// login connects, registers and authenticates name, and reads its own 126.
func (e *env) login(name string) *client {
	e.k.Helper()
	c := e.dial(name)
	c.register(name)
	c.authenticate(name)
	return c
}

// authenticate logs c in as name (registered already).
func (c *client) authenticate(name string) {
	c.k.Helper()
	m := c.call(proto.AuthenticateRequest{RequestID: c.nextID + 1, Name: name, Password: password(name)})
	c.nextID++
	r, ok := m.(proto.AuthenticateResponse)
	if !ok || r.User.Name != name {
		c.k.Fatalf("logging in as %q: want 116 {request_id, user:{id, name:%q}}, got %s%s", name, name, show(m),
			c.stepFailed("7.2", "users and sessions"))
	}
	c.user = r.User
	c.waitFor("after its own login", proto.UserLoginEvent{UserID: r.User.ID})
}

// createChannel creates a channel on c and returns it.
func (c *client) createChannel(name string) proto.Channel {
	c.k.Helper()
	m := c.call(proto.CreateChannelRequest{RequestID: c.id(), Name: name})
	r, ok := m.(proto.CreateChannelResponse)
	if !ok || r.Channel.Name != name || r.Channel.ID == 0 {
		c.k.Fatalf("creating channel %q: want 108 {channel:{id, name:%q}, request_id}, got %s%s", name, name, show(m),
			c.stepFailed("7.3", "channels"))
	}
	return r.Channel
}

// join moves c into ch and waits for the answer.
func (c *client) join(ch uint32) {
	c.k.Helper()
	m := c.call(proto.JoinChannelRequest{RequestID: c.id(), ChannelID: ch})
	if r, ok := m.(proto.JoinChannelResponse); !ok || r.ChannelID != ch {
		c.k.Fatalf("joining channel %d: want 118 {channel_id:%d, request_id}, got %s%s", ch, ch, show(m),
			c.stepFailed("7.3", "channels"))
	}
}

// say writes a chat message and waits for its own echo.
func (c *client) say(ch uint32, content string) {
	c.k.Helper()
	c.send(proto.WriteChat{Content: content})
	c.waitFor("the echo of its own chat message", proto.ReceiveChat{ChannelID: ch, Content: content, UserID: c.user.ID})
}

// openDB opens the server's database read-only, to check what is stored.
func (e *env) openDB() *sql.DB {
	e.k.Helper()
	db, err := sql.Open("sqlite", "file:"+e.cfg.DBPath+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		e.k.Fatalf("open the database %s: %v", e.cfg.DBPath, err)
	}
	e.k.Cleanup(func() { db.Close() })
	return db
}

// sendGetChannels sends a GetChannels request and returns its id.
func (c *client) sendGetChannels() uint64 {
	c.k.Helper()
	id := c.id()
	c.send(proto.GetChannelsRequest{RequestID: id})
	return id
}

// expectAnswer checks that the next message answers request id (a 120 or
// a 100 carrying it).
func (c *client) expectAnswer(why string, id uint64) {
	c.k.Helper()
	m, err := c.tryNext()
	if err != nil {
		c.k.Fatalf("%s: %s wants the answer to request %d, got %s%s", why, c.who, id, describe(err), c.context())
	}
	if r, ok := m.(proto.Requester); !ok || r.Request() != id ||
		(m.Type() != proto.TypeGetChannelsResponse && m.Type() != proto.TypeErrorResponse) {
		c.k.Fatalf("%s: %s wants the answer to request %d (120 or 100 with request_id %d)\n   got: %s%s",
			why, c.who, id, id, show(m), c.context())
	}
}

// check runs one named check of an exercise as a subtest with its own
// harness, against the same server.
func check(k *testkit.T, e *env, name string, f func(k *testkit.T, e *env)) {
	k.Run(name, func(t *testing.T) {
		sk := testkit.New(t, k.Exercise())
		f(sk, e.on(sk))
	})
}

// on returns e as seen from the harness k (a subtest's).
func (e *env) on(k *testkit.T) *env {
	c := *e
	c.k = k
	return &c
}

func fmtAny(v any) string { return fmt.Sprint(v) }

// holds reports whether want has arrived and waits in the backlog.
func (c *client) holds(want proto.Message) bool {
	for _, m := range c.backlog {
		if same(m, want) {
			return true
		}
	}
	return false
}
