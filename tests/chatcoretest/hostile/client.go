package hostile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// client is one connection of a check. It remembers what it sent, for
// failure messages; every wait has a deadline.
type client struct {
	k    *testkit.T
	who  string
	addr string // the server's
	nc   net.Conn
	r    *bufio.Reader
	sent []string
	next uint64
	user proto.User
	// halted ends every read at once (see halt); a wait that is no longer
	// needed must not be renewed by the next read's deadline.
	halted atomic.Bool
}

// dial connects to the server at addr from 127.0.0.1.
func dial(k *testkit.T, addr, who string) *client {
	k.Helper()
	c, ok := dialFrom(k, addr, "127.0.0.1", who)
	if !ok {
		k.Fatalf("%s: cannot connect from 127.0.0.1", who)
	}
	return c
}

// dialFrom connects to the server at addr from the local address ip. It
// reports false if the machine cannot (not every system routes all of
// 127.0.0.0/8 to the loopback).
func dialFrom(k *testkit.T, addr, ip, who string) (*client, bool) {
	k.Helper()
	d := net.Dialer{Timeout: testkit.IOTimeout, LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	nc, err := d.Dial("tcp", addr)
	if errors.Is(err, syscall.EADDRNOTAVAIL) {
		return nil, false
	}
	if err != nil {
		k.Fatalf("%s: dial %s from %s: %v", who, addr, ip, err)
	}
	return wrap(k, addr, nc, who+" (from "+ip+")"), true
}

// needAddresses dials from ip once, to learn whether the machine can, and
// skips the check if it cannot.
func needAddresses(k *testkit.T, addr string, ips ...string) {
	k.Helper()
	for _, ip := range ips {
		c, ok := dialFrom(k, addr, ip, "a probe")
		if !ok {
			k.Skipf("this machine cannot connect from %s (127.0.0.0/8 is not all loopback here): the check "+
				"needs several client addresses", ip)
		}
		c.nc.Close()
	}
}

func wrap(k *testkit.T, addr string, nc net.Conn, who string) *client {
	k.OnAbort(func() { nc.Close() })
	k.Cleanup(func() { nc.Close() })
	return &client{k: k, who: who, addr: addr, nc: nc, r: bufio.NewReader(nc)}
}

func (c *client) id() uint64 {
	c.next++
	return c.next
}

// context is the end of a failure message: what the client sent lately.
func (c *client) context() string {
	sent := c.sent
	if len(sent) > 6 {
		sent = sent[len(sent)-6:]
	}
	if len(sent) == 0 {
		return "\n  " + c.who + " sent: (nothing)"
	}
	return "\n  " + c.who + " sent: " + strings.Join(sent, "\n      ")
}

// show formats a message for a failure message.
func show(m proto.Message) string {
	if m == nil {
		return "(nothing)"
	}
	s := fmt.Sprintf("%d %+v", m.Type(), m)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// write sends raw bytes; what says what they are.
func (c *client) write(b []byte, what string) {
	c.k.Helper()
	c.sent = append(c.sent, what)
	c.nc.SetWriteDeadline(time.Now().Add(testkit.IOTimeout))
	if _, err := c.nc.Write(b); err != nil {
		c.k.Fatalf("%s: send %s: %v%s", c.who, what, err, c.context())
	}
}

// send encodes and sends m.
func (c *client) send(m proto.Message) {
	c.k.Helper()
	b, err := proto.Encode(m)
	if err != nil {
		c.k.Fatalf("test bug: encode %s: %v", show(m), err)
	}
	c.write(b, show(m))
}

// trySend sends ms in one write and reports whether it succeeded (a
// server that has closed the connection makes it fail).
func (c *client) trySend(ms ...proto.Message) bool {
	var b []byte
	for _, m := range ms {
		b, _ = proto.AppendFrame(b, m)
		c.sent = append(c.sent, show(m))
	}
	c.nc.SetWriteDeadline(time.Now().Add(testkit.IOTimeout))
	_, err := c.nc.Write(b)
	return err == nil
}

// read reads the next frame before deadline.
func (c *client) read(deadline time.Time) (proto.Message, error) {
	c.nc.SetReadDeadline(deadline)
	if c.halted.Load() { // after setting the deadline: halt sets its own after storing
		c.nc.SetReadDeadline(time.Now())
	}
	body, err := proto.ReadFrame(c.r, nil)
	if err != nil {
		return nil, err
	}
	return proto.Decode(body)
}

// answer reads until the answer to request id (events are skipped) or a
// 101, which it returns too; it fails the check if none comes within
// IOTimeout.
func (c *client) answer(id uint64, what string) proto.Message {
	c.k.Helper()
	deadline := time.Now().Add(testkit.IOTimeout)
	for {
		m, err := c.read(deadline)
		if err != nil {
			c.k.Fatalf("%s: %s: no answer to request %d within %v (%s)%s", c.who, what, id, testkit.IOTimeout,
				testkit.Describe(err), c.context())
		}
		if r, ok := m.(proto.Requester); ok && r.Request() == id {
			return m
		}
		if _, ok := m.(proto.Error); ok {
			return m
		}
	}
}

// call sends req and returns its answer.
func (c *client) call(req proto.Requester, what string) proto.Message {
	c.k.Helper()
	c.send(req)
	return c.answer(req.Request(), what)
}

// expect sends req and fails the check unless the answer is want.
func (c *client) expect(what string, req proto.Requester, want proto.Message) proto.Message {
	c.k.Helper()
	got := c.call(req, what)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		c.k.Fatalf("%s: %s\n  want: %s\n   got: %s%s", c.who, what, show(want), show(got), c.context())
	}
	return got
}

// served reports whether the server serves this connection: a heartbeat
// (answered before login, in every chapter) is answered, rather than a
// refusal. It returns the refusal's text, or "".
func (c *client) served() (bool, string) {
	c.k.Helper()
	id := c.id()
	c.send(proto.HeartbeatRequest{RequestID: id})
	deadline := time.Now().Add(testkit.IOTimeout)
	for {
		m, err := c.read(deadline)
		if err != nil {
			c.k.Fatalf("%s: a heartbeat on a new connection got neither its answer nor a refusal within %v (%s): "+
				"a connection past a cap is told why (101) and closed%s", c.who, testkit.IOTimeout,
				testkit.Describe(err), c.context())
		}
		switch m := m.(type) {
		case proto.HeartbeatResponse:
			if m.RequestID == id {
				return true, ""
			}
		case proto.Error:
			return false, m.Value
		}
	}
}

// halt ends the read under way, from another goroutine, and every later one
// until resume: setting a past read deadline alone is undone by the waiting
// goroutine's next read (an event arrived, and it reads on).
func (c *client) halt() {
	c.halted.Store(true)
	c.nc.SetReadDeadline(time.Now())
}

// resume undoes halt, once the goroutine that read has returned.
func (c *client) resume() { c.halted.Store(false) }

// refusedWithin reads past events until a 101, and reports whether it was
// 101 text and the connection was then closed, before deadline.
func (c *client) refusedWithin(deadline time.Time, text string) bool {
	for {
		m, err := c.read(deadline)
		if err != nil {
			return false
		}
		if e, ok := m.(proto.Error); ok {
			return e.Value == text && c.closedWithin(deadline)
		}
	}
}

// closedWithin reads (and ignores) frames until the server closes the
// connection, and reports whether it did before deadline.
func (c *client) closedWithin(deadline time.Time) bool {
	for {
		_, err := c.read(deadline)
		var ne net.Error
		switch {
		case err == nil, errors.Is(err, proto.ErrUnknownType):
			continue
		case errors.As(err, &ne) && ne.Timeout():
			return false
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
			return true
		default:
			var de *proto.DecodeError
			if errors.As(err, &de) {
				continue
			}
			return true
		}
	}
}

// password is the password the checks give name.
func password(name string) string { return "pw-" + name }

// register creates the user name on this connection.
func (c *client) register(name string) proto.User {
	c.k.Helper()
	id := c.id()
	m := c.call(proto.CreateUserRequest{RequestID: id, Name: name, Password: password(name)}, "registering "+name)
	r, ok := m.(proto.CreateUserResponse)
	if !ok || r.User.Name != name {
		c.k.Fatalf("%s: registering %q: want 110 with the user, got %s%s", c.who, name, show(m), c.context())
	}
	return r.User
}

// login registers name and logs this connection in as it.
func (c *client) login(name string) {
	c.k.Helper()
	u := c.register(name)
	id := c.id()
	c.expect("logging in as "+name, proto.AuthenticateRequest{RequestID: id, Name: name, Password: password(name)},
		proto.AuthenticateResponse{RequestID: id, User: u})
	c.user = u
}

// createChannel creates (or finds) a channel and returns it.
func (c *client) createChannel(name string) proto.Channel {
	c.k.Helper()
	id := c.id()
	m := c.call(proto.CreateChannelRequest{RequestID: id, Name: name}, "creating channel "+name)
	r, ok := m.(proto.CreateChannelResponse)
	if !ok || r.Channel.Name != name {
		c.k.Fatalf("%s: creating channel %q: want 108 with the channel, got %s%s", c.who, name, show(m), c.context())
	}
	return r.Channel
}

// join joins a channel.
func (c *client) join(ch uint32) {
	c.k.Helper()
	id := c.id()
	c.expect(fmt.Sprintf("joining channel %d", ch), proto.JoinChannelRequest{RequestID: id, ChannelID: ch},
		proto.JoinChannelResponse{RequestID: id, ChannelID: ch})
}

// say writes a chat message and waits for its echo.
func (c *client) say(ch uint32, content string) {
	c.k.Helper()
	c.send(proto.WriteChat{Content: content})
	deadline := time.Now().Add(testkit.IOTimeout)
	for {
		m, err := c.read(deadline)
		if err != nil {
			c.k.Fatalf("%s: no echo of its chat message of %d bytes within %v (%s)%s", c.who, len(content),
				testkit.IOTimeout, testkit.Describe(err), c.context())
		}
		switch m := m.(type) {
		case proto.ReceiveChat:
			if m.UserID == c.user.ID && m.Content == content {
				return
			}
		case proto.Error:
			c.k.Fatalf("%s: a chat message of %d bytes: want its echo, got %s%s", c.who, len(content), show(m), c.context())
		}
	}
}

// frameHead is the start of a frame of n bytes of body whose JSON is a
// valid request with request_id 1 padded with spaces: sending it and
// stopping leaves the server in the middle of an n-byte frame.
func frameHead(n, typ int, payload string, sent int) (head, rest []byte) {
	body := fmt.Sprintf(`{"payload":%s,"type_id":%d}`, payload, typ)
	full := make([]byte, proto.HeaderSize+n)
	full[0], full[1], full[2], full[3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	copy(full[proto.HeaderSize:], body)
	for i := proto.HeaderSize + len(body); i < len(full); i++ {
		full[i] = ' '
	}
	return full[:proto.HeaderSize+sent], full[proto.HeaderSize+sent:]
}
