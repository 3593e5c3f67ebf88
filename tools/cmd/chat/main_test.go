//go:build solutions

// These end-to-end tests run the client against the reference servers of
// solutions/01 and 02, which only the maintainers' tree has: make unit runs
// them with -tags solutions; the student release leaves this file out.

package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	discovery "serverlab/solutions/01"
	chat "serverlab/solutions/02"
	"serverlab/tests/testkit"
	"serverlab/tools/given/lab"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// wait bounds every wait in these tests.
const wait = 5 * time.Second

// servers starts the reference discovery and chat servers on one users file,
// as a student would run them, and returns their addresses.
func servers(t *testing.T) (disc, srv string, chatServer lab.Server) {
	t.Helper()
	users := filepath.Join(t.TempDir(), "users.txt")
	d, err := discovery.New(discovery.Config{UsersPath: users, Logger: testkit.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	c, err := chat.New(chat.Config{UsersPath: users, Logger: testkit.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, d), serve(t, c), c
}

func serve(t *testing.T, srv lab.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; !errors.Is(err, lab.ErrServerClosed) {
			t.Errorf("Serve returned %v", err)
		}
	})
	return ln.Addr().String()
}

// client is one run of the chat client, driven through pipes.
type client struct {
	t     *testing.T
	name  string
	stdin *io.PipeWriter
	lines chan string // stdout, line by line
	done  chan error  // run's result
}

func start(t *testing.T, args ...string) *client {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &client{t: t, name: strings.Join(args, " "), stdin: inW, lines: make(chan string, 100), done: make(chan error, 1)}
	go func() {
		s := bufio.NewScanner(outR)
		for s.Scan() {
			c.lines <- s.Text()
		}
		close(c.lines)
	}()
	go func() {
		err := run(context.Background(), args, inR, outW)
		outW.Close()
		c.done <- err
	}()
	t.Cleanup(func() {
		inW.Close() // ends the client's stdin reader, and the client if it still runs
		select {
		case <-c.done:
		case <-time.After(wait):
			t.Errorf("client %s did not end within %v of its input closing", c.name, wait)
		}
	})
	return c
}

// type_ writes one input line.
func (c *client) type_(line string) {
	c.t.Helper()
	written := make(chan error, 1)
	go func() {
		_, err := io.WriteString(c.stdin, line+"\n")
		written <- err
	}()
	select {
	case err := <-written:
		if err != nil {
			c.t.Fatalf("client %s: typing %q: %v", c.name, line, err)
		}
	case <-time.After(wait):
		c.t.Fatalf("client %s did not read the line %q within %v", c.name, line, wait)
	}
}

// expect reads output lines until one equals want; lines before it are
// returned (so a test can say what else came).
func (c *client) expect(want, after string) {
	c.t.Helper()
	var seen []string
	deadline := time.After(wait)
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("client %s: after %s, want the line %q; the client ended; it printed:\n%s",
					c.name, after, want, strings.Join(seen, "\n"))
			}
			if line == want {
				return
			}
			seen = append(seen, line)
		case <-deadline:
			c.t.Fatalf("client %s: after %s, want the line %q within %v; it printed:\n%s",
				c.name, after, want, wait, strings.Join(seen, "\n"))
		}
	}
}

// result waits for run to return.
func (c *client) result() error {
	c.t.Helper()
	select {
	case err := <-c.done:
		c.done <- err // for the cleanup
		return err
	case <-time.After(wait):
		c.t.Fatalf("client %s did not end within %v", c.name, wait)
		return nil
	}
}

func TestChatEndToEnd(t *testing.T) {
	disc, srv, _ := servers(t)
	args := func(user, pw string) []string {
		return []string{"-addr", srv, "-discovery", disc, "-user", user, "-password", pw}
	}
	alice := start(t, args("alice", "pw-a")...)
	alice.expect("Logged in as alice. Type /help for the commands.", "starting")
	bob := start(t, args("bob", "pw-b")...)
	bob.expect("Logged in as bob. Type /help for the commands.", "starting")

	alice.type_("/all hello everyone")
	bob.expect("[alice -> ALL]: hello everyone", "alice typed /all hello everyone")
	bob.type_("/msg alice hi alice, it's bob")
	alice.expect("[bob -> YOU]: hi alice, it's bob", "bob typed /msg alice …")
	alice.type_("/users")
	alice.expect("Users:", "alice typed /users")
	alice.expect("  alice | active: 1", "alice typed /users")
	alice.expect("  bob | active: 1", "alice typed /users")
	alice.type_("/msg nobody are you there?")
	alice.expect("[server -> YOU]: User not online.", "alice wrote to nobody")

	// A message is sent as typed: leading spaces are part of it.
	alice.type_("/all  spaced out")
	bob.expect("[alice -> ALL]:  spaced out", "alice typed /all with two spaces")
	bob.type_("/msg alice   three")
	alice.expect("[bob -> YOU]:   three", "bob typed /msg alice with three spaces")

	alice.type_("/frobnicate")
	alice.expect("unknown command /frobnicate; type /help for the list", "an unknown command")
	alice.type_("just some text")
	alice.expect("not sent: type /all <message> to send to everyone, or /help for the commands", "text without a command")
	alice.type_("/msg bob")
	alice.expect("usage: /msg <user> <message>", "/msg without a message")
	alice.type_("/help")
	alice.expect("  /quit                   leave", "/help")

	alice.type_("/quit")
	alice.expect("Bye.", "/quit")
	if err := alice.result(); err != nil {
		t.Errorf("after /quit, the client returned %v; want nil", err)
	}
}

func TestChatRefusals(t *testing.T) {
	disc, srv, _ := servers(t)
	args := func(user, pw string) []string {
		return []string{"-addr", srv, "-discovery", disc, "-user", user, "-password", pw}
	}
	carol := start(t, args("carol", "pw-c")...)
	carol.expect("Logged in as carol. Type /help for the commands.", "starting")

	thief := start(t, args("carol", "stolen")...)
	if err := thief.result(); err == nil || !strings.Contains(err.Error(), "registration refused") {
		t.Errorf("registering carol with another password: want a \"registration refused\" error, got %v", err)
	}
	twin := start(t, args("carol", "pw-c")...)
	if err := twin.result(); err == nil || !strings.Contains(err.Error(), "login refused") {
		t.Errorf("logging in as carol while she is online: want a \"login refused\" error, got %v", err)
	}
	nobody := start(t, "-addr", srv, "-discovery", "127.0.0.1:1", "-user", "dave", "-password", "pw")
	if err := nobody.result(); err == nil || !strings.Contains(err.Error(), "cannot reach the discovery server") {
		t.Errorf("with no discovery server: want a \"cannot reach the discovery server\" error, got %v", err)
	}
}

func TestChatConnectionLost(t *testing.T) {
	disc, srv, chatServer := servers(t)
	erin := start(t, "-addr", srv, "-discovery", disc, "-user", "erin", "-password", "pw-e")
	erin.expect("Logged in as erin. Type /help for the commands.", "starting")
	chatServer.Close()
	erin.expect("Connection to the chat server lost: the server closed it", "the chat server was closed")
	if err := erin.result(); err == nil {
		t.Errorf("after losing the connection the client returned nil; want an error (exit status 1)")
	}
}

// Without -user and -password the client asks for them, as the original did.
func TestChatAsksForCredentials(t *testing.T) {
	disc, srv, _ := servers(t)
	dave := start(t, "-addr", srv, "-discovery", disc)
	dave.type_("dave")
	dave.type_("pw-d")
	// The prompts end without a newline, so they share a line with what follows.
	dave.expect("Username: Password: Registered as dave with the discovery server at "+disc+".", "answering the prompts")
	dave.expect("Logged in as dave. Type /help for the commands.", "answering the prompts")
	dave.type_("/quit")
	dave.expect("Bye.", "/quit")
}

func TestChatRegisterOnly(t *testing.T) {
	disc, srv, _ := servers(t)
	frank := start(t, "-discovery", disc, "-server", "127.0.0.1:1", "-user", "frank", "-password", "pw-f", "-register-only")
	frank.expect("Registered as frank with the discovery server at "+disc+".", "-register-only")
	if err := frank.result(); err != nil {
		t.Fatalf("-register-only: the client returned %v; want nil (it never contacts the chat server)", err)
	}
	again := start(t, "-addr", srv, "-discovery", disc, "-user", "frank", "-password", "pw-f")
	again.expect("Logged in as frank. Type /help for the commands.", "logging in as the user -register-only created")
}

// TestAddrFlagAndItsOldName checks that -addr names the chat server, as in
// every other tool, and that the old -server still works.
func TestAddrFlagAndItsOldName(t *testing.T) {
	for _, name := range []string{"-addr", "-server"} {
		o, err := parseFlags([]string{name, "127.0.0.1:7007", "-discovery", "127.0.0.1:7005"}, io.Discard)
		if err != nil {
			t.Fatalf("parseFlags with %s: %v", name, err)
		}
		if o.server != "127.0.0.1:7007" || o.discovery != "127.0.0.1:7005" {
			t.Errorf("parseFlags(%s 127.0.0.1:7007 -discovery 127.0.0.1:7005): chat server %q, discovery %q; want 127.0.0.1:7007, 127.0.0.1:7005",
				name, o.server, o.discovery)
		}
	}
}
