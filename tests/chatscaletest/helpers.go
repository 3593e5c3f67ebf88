package chatscaletest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"serverlab/tests/chatcoretest/hostile"
	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
	"serverlab/tools/given/lab"
)

// chatServer is one server under test.
type chatServer struct {
	k    *testkit.T
	name string
	impl Impl
	cfg  Config
	srv  *testkit.Server
}

// baseConfig is what every check's servers share: a cheap hash, short
// timeouts (a broken server must fail a check quickly), scaled as every wait
// of the suites is: at load 40 one history's NATS calls took 3.35 s, and a
// fixed 3 s turned a correct server's answer into "Storage failed.".
func baseConfig(k *testkit.T, url string) Config {
	return Config{
		NATSURL:        url,
		PublishTimeout: scaled(3 * time.Second),
		RequestTimeout: scaled(3 * time.Second),
		HashIterations: 1000,
		Logger:         testkit.Logger(),
	}
}

// hostileStart is how the hostile suite of the chatcore family
// (tests/chatcoretest/hostile, which chapter 07 runs too) starts this
// chapter's servers: one server with the limits a check sets, on a NATS of
// its own (a cap on channels counts the bucket's).
func hostileStart(impl Impl) hostile.Start {
	return func(k *testkit.T, l hostile.Limits) string {
		k.Helper()
		cfg := baseConfig(k, startNATS(k).url())
		hostileLimits(&cfg, l)
		return serve(k, impl, "H", cfg).srv.Addr
	}
}

// hostileLimits sets the limits of cfg that l sets.
func hostileLimits(cfg *Config, l hostile.Limits) {
	cfg.LoginTimeout, cfg.IdleTimeout, cfg.WriteTimeout = l.LoginTimeout, l.IdleTimeout, l.WriteTimeout
	cfg.MaxConnections, cfg.MaxConnsPerAddress = l.MaxConnections, l.MaxConnsPerAddress
	cfg.PreAuthBudget, cfg.InputBudget, cfg.MaxPending = l.PreAuthBudget, l.InputBudget, l.MaxPending
	cfg.OutputBudget, cfg.HistoryReads = l.OutputBudget, l.HistoryReads
	cfg.MaxChannels, cfg.MaxChannelsPerUser = l.MaxChannels, l.MaxChannelsPerUser
	cfg.MaxChannelsPerAddress = l.MaxChannelsPerAddress
	if l.MaxStoreBytes > 0 {
		cfg.MaxStreamBytes = int64(l.MaxStoreBytes)
	}
	cfg.AddressFailures, cfg.FailureWindow = l.AddressFailures, l.FailureWindow
	cfg.MaxMessage, cfg.PresenceBurst, cfg.PresenceRate = l.MaxMessage, l.PresenceBurst, l.PresenceRate
	cfg.ChatBurst, cfg.ChatRate = l.ChatBurst, l.ChatRate
	cfg.HashWait = l.HashWait
	if l.BurstHash {
		cfg.HashIterations = burstHashIterations
	}
}

// burstHashIterations makes a password hash take a few milliseconds (the
// hostile suite's BurstHash): enough for a burst to queue.
const burstHashIterations = 3000

// serve builds and serves one server named name.
func serve(k *testkit.T, impl Impl, name string, cfg Config) *chatServer {
	k.Helper()
	cfg.DBPath = filepath.Join(k.TempDir(), name+".db")
	s := &chatServer{k: k, name: name, impl: impl, cfg: cfg}
	s.start()
	return s
}

func (s *chatServer) start() {
	s.k.Helper()
	srv, err := s.impl.NewServer(s.cfg)
	if errors.Is(err, lab.ErrNotImplemented) {
		s.k.Fatalf("building server %s needs an exercise: %v", s.name, err)
	}
	if err != nil {
		s.k.Fatalf("NewServer (server %s, NATS %s): %v", s.name, s.cfg.NATSURL, err)
	}
	s.srv = s.k.Serve(srv)
}

// restart closes the server and serves a new one with the same
// configuration.
func (s *chatServer) restart() {
	s.k.Helper()
	s.srv.Close()
	s.start()
}

// client is one connection of a check. Every wait has a deadline; it
// remembers what it sent, and keeps what a wait for something else read
// past (backlog), in order.
type client struct {
	k       *testkit.T
	who     string
	nc      net.Conn
	r       *bufio.Reader
	sent    []string
	backlog []proto.Message
	nextID  uint64
	user    proto.User
}

// dial connects to server s; who names the client in messages.
func (s *chatServer) dial(who string) *client {
	s.k.Helper()
	nc, err := net.DialTimeout("tcp", s.srv.Addr, testkit.IOTimeout)
	if err != nil {
		s.k.Fatalf("%s: dial server %s: %v", who, s.name, err)
	}
	s.k.Cleanup(func() { nc.Close() })
	s.k.OnAbort(func() { nc.Close() })
	return &client{k: s.k, who: who + " (on server " + s.name + ")", nc: nc, r: bufio.NewReader(nc), nextID: 1000}
}

// show prints a message as type and JSON.
func show(m proto.Message) string {
	if m == nil {
		return "nothing"
	}
	return fmt.Sprintf("%d %+v", m.Type(), m)
}

func (c *client) send(m proto.Message) {
	c.k.Helper()
	b, err := proto.Encode(m)
	if err != nil {
		c.k.Fatalf("encode %s: %v", show(m), err)
	}
	c.sent = append(c.sent, show(m))
	c.nc.SetWriteDeadline(time.Now().Add(testkit.IOTimeout))
	if _, err := c.nc.Write(b); err != nil {
		c.k.Fatalf("%s: send %s: %v", c.who, show(m), err)
	}
}

// context is what a failure message adds: what this client sent lately.
func (c *client) context() string {
	sent := c.sent
	if len(sent) > 6 {
		sent = sent[len(sent)-6:]
	}
	return fmt.Sprintf("\n%s sent (last %d): %s", c.who, len(sent), strings.Join(sent, " | "))
}

// tryNext returns the next message (the backlog first), waiting at most d.
func (c *client) tryNext(d time.Duration) (proto.Message, error) {
	if len(c.backlog) > 0 {
		m := c.backlog[0]
		c.backlog = c.backlog[1:]
		return m, nil
	}
	c.nc.SetReadDeadline(time.Now().Add(d))
	return proto.Read(c.r)
}

// waitFor reads until a message satisfies match, keeping the others in the
// backlog, and returns it; it fails the check after testkit.IOTimeout.
func (c *client) waitFor(why string, match func(proto.Message) bool) proto.Message {
	c.k.Helper()
	var skipped []proto.Message
	defer func() { c.backlog = append(skipped, c.backlog...) }()
	deadline := time.Now().Add(testkit.IOTimeout)
	for {
		m, err := c.tryNext(time.Until(deadline))
		if err != nil {
			c.k.Fatalf("%s: %s: nothing matching came (%v); got before: %s%s", c.who, why, err, showAll(skipped), c.context())
		}
		if match(m) {
			return m
		}
		skipped = append(skipped, m)
	}
}

// until reads until the message want, within d, and returns what came
// before it, events left out; it fails the check if want does not come.
func (c *client) until(why string, want proto.Message, d time.Duration) []proto.Message {
	c.k.Helper()
	var before []proto.Message
	deadline := time.Now().Add(d)
	for {
		m, err := c.tryNext(time.Until(deadline))
		if err != nil {
			c.k.Fatalf("%s: %s: want %s within %v, got none (%v); got before: %s%s", c.who, why, show(want), d, err, showAll(before), c.context())
		}
		if m == want {
			return before
		}
		if !isEvent(m) {
			before = append(before, m)
		}
	}
}

func showAll(ms []proto.Message) string {
	if len(ms) == 0 {
		return "nothing"
	}
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = show(m)
	}
	return strings.Join(parts, ", ")
}

// isEvent reports whether m is one of the best-effort events (125–129).
func isEvent(m proto.Message) bool {
	return m.Type() >= proto.TypeUserLogoutEvent && m.Type() <= proto.TypeChannelCreateEvent
}

// call sends a request and returns its answer (the message with its
// request id), skipping events.
func (c *client) call(req proto.Requester) proto.Message {
	c.k.Helper()
	c.send(req)
	return c.waitFor(fmt.Sprintf("the answer to %s", show(req)), func(m proto.Message) bool {
		r, ok := m.(proto.Requester)
		return ok && r.Request() == req.Request()
	})
}

// id returns a fresh request id.
func (c *client) id() uint64 {
	c.nextID++
	return c.nextID
}

// callExpect calls and checks the answer.
func (c *client) callExpect(why string, req proto.Requester, want proto.Message) {
	c.k.Helper()
	if got := c.call(req); !reflect.DeepEqual(got, want) {
		c.k.Fatalf("%s: %s\nsent: %s\nwant: %s\ngot:  %s%s%s", c.who, why, show(req), show(want), show(got), notImplemented(got), c.context())
	}
}

// notImplemented says so when an answer is a stub's.
func notImplemented(m proto.Message) string {
	if e, ok := m.(proto.ErrorResponse); ok && strings.Contains(e.Value, lab.ErrNotImplemented.Error()) {
		return "\n(that is a stub's answer: the exercise it names is not written yet)"
	}
	if e, ok := m.(proto.Error); ok && strings.Contains(e.Value, lab.ErrNotImplemented.Error()) {
		return "\n(that is a stub's answer: the exercise it names is not written yet)"
	}
	return ""
}

// password is the suite's password for a user.
func password(name string) string { return "pw-" + name }

// register creates a user and returns it.
func (c *client) register(name string) proto.User {
	c.k.Helper()
	req := proto.CreateUserRequest{Name: name, Password: password(name), RequestID: c.id()}
	got := c.call(req)
	r, ok := got.(proto.CreateUserResponse)
	if !ok || r.User.Name != name || r.User.ID == 0 {
		c.k.Fatalf("%s: registering %q\nwant: 110 with the user and an id\ngot:  %s%s%s", c.who, name, show(got), notImplemented(got), c.context())
	}
	return r.User
}

// authenticate logs in as name and returns the answer.
func (c *client) authenticate(name string) proto.Message {
	c.k.Helper()
	return c.call(proto.AuthenticateRequest{Name: name, Password: password(name), RequestID: c.id()})
}

// login logs in as name, which must work.
func (c *client) login(name string) {
	c.k.Helper()
	got := c.authenticate(name)
	r, ok := got.(proto.AuthenticateResponse)
	if !ok || r.User.Name != name {
		c.k.Fatalf("%s: logging in as %q\nwant: 116 with the user\ngot:  %s%s%s", c.who, name, show(got), notImplemented(got), c.context())
	}
	c.user = r.User
}

// newUser registers name on this connection and logs in.
func (c *client) newUser(name string) {
	c.k.Helper()
	c.register(name)
	c.login(name)
}

// createChannel creates (or finds) a channel.
func (c *client) createChannel(name string) proto.Channel {
	c.k.Helper()
	req := proto.CreateChannelRequest{Name: name, RequestID: c.id()}
	got := c.call(req)
	r, ok := got.(proto.CreateChannelResponse)
	if !ok || r.Channel.Name != name || r.Channel.ID == 0 {
		c.k.Fatalf("%s: creating channel %q\nwant: 108 with the channel and an id\ngot:  %s%s%s", c.who, name, show(got), notImplemented(got), c.context())
	}
	return r.Channel
}

// join joins a channel, which must work.
func (c *client) join(ch uint32) {
	c.k.Helper()
	c.callExpect("joining a channel", proto.JoinChannelRequest{ChannelID: ch, RequestID: c.id()},
		proto.JoinChannelResponse{ChannelID: ch, RequestID: c.nextID})
}

// nextChat returns the next chat message (103), skipping events; it fails
// the check if none comes in time or something else comes.
func (c *client) nextChat(why string) proto.ReceiveChat {
	c.k.Helper()
	deadline := time.Now().Add(testkit.IOTimeout)
	for {
		m, err := c.tryNext(time.Until(deadline))
		if err != nil {
			c.k.Fatalf("%s: %s: want a chat message (103), got none (%v)%s", c.who, why, err, c.context())
		}
		if isEvent(m) {
			continue
		}
		rc, ok := m.(proto.ReceiveChat)
		if !ok {
			c.k.Fatalf("%s: %s: want a chat message (103)\ngot: %s%s%s", c.who, why, show(m), notImplemented(m), c.context())
		}
		return rc
	}
}

// expectChats reads len(want) chat messages and checks them, in order.
func (c *client) expectChats(why string, want []proto.ReceiveChat) {
	c.k.Helper()
	for i, w := range want {
		got := c.nextChat(why)
		if got != w {
			c.k.Fatalf("%s: %s: message %d of %d\nwant: %+v\ngot:  %+v\n(each client gets every message of its channel once, in the stream's order)%s",
				c.who, why, i+1, len(want), w, got, c.context())
		}
	}
}

// quiet is how long a check listens for something that must not come.
const quiet = 300 * time.Millisecond

// expectNoChat fails if a chat message comes within quiet.
func (c *client) expectNoChat(why string) {
	c.k.Helper()
	c.expectNo(why, func(m proto.Message) bool {
		_, ok := m.(proto.ReceiveChat)
		return ok
	})
}

// expectNo fails if a message that matches comes within quiet.
func (c *client) expectNo(why string, match func(proto.Message) bool) {
	c.k.Helper()
	deadline := time.Now().Add(quiet)
	for {
		m, err := c.tryNext(time.Until(deadline))
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return
			}
			c.k.Fatalf("%s: %s: the connection failed: %v%s", c.who, why, err, c.context())
		}
		if match(m) {
			c.k.Fatalf("%s: %s\ngot: %s%s", c.who, why, show(m), c.context())
		}
	}
}

// history asks for the newest limit messages of ch.
func (c *client) history(ch, limit uint32) []proto.ChatMessage {
	c.k.Helper()
	req := proto.GetChatsRequest{ChannelID: ch, Limit: limit, RequestID: c.id()}
	got := c.call(req)
	r, ok := got.(proto.GetChatsResponse)
	if !ok || r.ChannelID != ch {
		c.k.Fatalf("%s: history of channel %d\nwant: 106\ngot:  %s%s%s", c.who, ch, show(got), notImplemented(got), c.context())
	}
	return r.Messages
}
