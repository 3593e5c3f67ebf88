package chattest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"serverlab/tests/testkit"
	"serverlab/tools/given/lab"
	"serverlab/tools/given/users"
	"serverlab/tools/given/wire"
)

// everyone is the target of every relayed BROADCAST.
const everyone = wire.Everyone

// The server's replies.
const (
	replyOK   = wire.ReplyOK
	replyFail = wire.ReplyFail
	notOnline = wire.NotOnline
	noUsers   = wire.NoUsers
)

// env is one server under test and its users file.
type env struct {
	k     *testkit.T
	srv   *testkit.Server
	raw   lab.Server // the server itself, for checks that call Close
	users string     // path of the users file
	login string     // "" in the check of exercise 2.1; otherwise says that login comes first
}

// password is the password the suite registers for name.
func password(name string) string { return "pw-" + name }

// start writes a users file with one line per name and serves a new server.
func start(k *testkit.T, impl Impl, cfg Config, names ...string) *env {
	k.Helper()
	return startOn(k, impl, cfg, nil, names...)
}

// startOn is start on a listener of the check's own (nil: a fresh one).
func startOn(k *testkit.T, impl Impl, cfg Config, ln net.Listener, names ...string) *env {
	k.Helper()
	e := &env{k: k, users: filepath.Join(k.TempDir(), "users.txt")}
	if !strings.HasSuffix(k.Name(), "Login") { // every check but the login one
		e.login = "\n(this check needs logging in, the chapter's login exercise, to work first)"
	}
	e.register(names...)
	cfg.UsersPath = e.users
	if cfg.Logger == nil {
		cfg.Logger = testkit.Logger()
	}
	srv, err := impl.NewServer(cfg)
	if errors.Is(err, lab.ErrNotImplemented) {
		k.Fatalf("building the server needs an earlier exercise: %v", err)
	}
	if err != nil {
		k.Fatalf("NewServer(%+v): %v", cfg, err)
	}
	if ln == nil {
		e.raw, e.srv = srv, k.Serve(srv)
	} else {
		e.raw, e.srv = srv, k.ServeListener(srv, ln)
	}
	return e
}

// register appends one user per name to the users file, as the discovery
// server does.
func (e *env) register(names ...string) {
	e.k.Helper()
	var b strings.Builder
	for i, name := range names {
		b.WriteString(users.User{Name: name, Password: password(name), IP: "127.0.0.1", Port: 40000 + i}.Line())
	}
	f, err := testkit.OpenFile(e.users, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err == nil {
		_, err = f.WriteString(b.String())
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		e.k.Fatalf("test bug: writing the users file: %v", err)
	}
}

func loginFrame(name, pw string) wire.Frame {
	return wire.Frame{Type: wire.Login, Sender: name, Payload: []byte(pw)}
}

func loginReply(name, answer string) wire.Frame {
	return wire.Frame{Type: wire.Login, Sender: wire.ServerName, Target: name, Payload: []byte(answer)}
}

// loginAs connects and logs in as name, with the right password, and fails
// the check unless the server answers OK.
func (e *env) loginAs(name string) *testkit.Conn {
	e.k.Helper()
	c := e.k.Dial(e.srv)
	f := loginFrame(name, password(name))
	if err := c.TryWrite(testkit.Encode(f), "frame "+f.String()); err != nil {
		e.k.Fatalf("logging in as %s: %v%s%s", name, err, c.Context(), e.login)
	}
	got, err := c.TryReadFrame()
	if err != nil {
		e.k.Fatalf("logging in as %s: want %v, got %s%s%s", name, loginReply(name, replyOK), testkit.Describe(err), c.Context(), e.login)
	}
	if want := loginReply(name, replyOK); testkit.FrameDiff(want, got) != "" {
		e.k.Fatalf("logging in as %s (registered, not online): %s\n  want: %v\n   got: %v%s%s",
			name, testkit.FrameDiff(want, got), want, got, c.Context(), e.login)
	}
	return c
}

// tryLogin logs in on a new connection and returns the answer. The
// connection is closed unless the answer is OK.
func (e *env) tryLogin(name, pw string) (*testkit.Conn, wire.Frame, error) {
	c, err := e.k.TryDial(e.srv)
	if err != nil {
		return nil, wire.Frame{}, err
	}
	b, _ := wire.Encode(loginFrame(name, pw))
	if err := c.TryWrite(b, "frame "+loginFrame(name, pw).String()); err != nil {
		c.Close()
		return nil, wire.Frame{}, err
	}
	f, err := c.TryReadFrame()
	if err != nil || string(f.Payload) != replyOK {
		c.Close()
	}
	return c, f, err
}

// expect reads one frame from c, which the check knows as who, and fails the
// check unless it equals want. why says what the frame is for.
func expect(k *testkit.T, c *testkit.Conn, who string, want wire.Frame, why string) {
	k.Helper()
	got, err := c.TryReadFrame()
	if err != nil {
		k.Fatalf("%s: %s should receive %v, got %s%s%s", why, who, brief(want), testkit.Describe(err), c.Context(), needsOutbox(k))
	}
	if diff := testkit.FrameDiff(want, got); diff != "" {
		k.Fatalf("%s: %s received the wrong frame (%s)\n  want: %v\n   got: %v%s",
			why, who, diff, brief(want), brief(got), c.Context())
	}
}

// brief shortens a frame with a long payload for messages.
func brief(f wire.Frame) wire.Frame {
	if len(f.Payload) > 60 {
		f.Payload = fmt.Appendf(f.Payload[:40:40], "…(%d bytes)", len(f.Payload))
	}
	return f
}

// send writes f on c in one write, or fails the check. Unlike c.SendFrame it
// remembers a shortened frame for failure messages, which keeps large
// payloads cheap.
func send(k *testkit.T, c *testkit.Conn, f wire.Frame) {
	k.Helper()
	c.Write(testkit.Encode(f), "frame "+brief(f).String())
}

// needsOutbox reminds the checks after 2.2 that every frame after login
// travels through the outbox and writer goroutine of exercise 2.2.
func needsOutbox(k *testkit.T) string {
	if !strings.HasPrefix(k.Exercise(), "2.") || k.Exercise() == "2.1" || k.Exercise() == "2.2" {
		return "" // the outbox is chapter 02's design; an event loop has none
	}
	return "\n(if nothing at all arrives after login: every frame to a logged-in client goes through its " +
		"outbox and writer goroutine, exercise 2.2)"
}
