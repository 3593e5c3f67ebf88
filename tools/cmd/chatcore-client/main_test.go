//go:build solutions

package main

import (
	"bufio"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	chatcore "serverlab/solutions/07"
	"serverlab/tests/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestLineMode drives the client as a person would, line by line, against
// the reference server: register, log in, create a channel, join it and see
// its history, chat with another user, log out.
func TestLineMode(t *testing.T) {
	cfg := chatcore.Config{
		DBPath: filepath.Join(t.TempDir(), "chat.db"), Logger: testkit.Logger(),
		Hash: chatcore.HashParams{Time: 1, MemoryKiB: 64, Threads: 1},
	}
	// An administrator's account exists before the server that names it
	// starts (chatcore-server -add-user): registration grants no rights.
	op, err := chatcore.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := op.AddUser("bob", "pw-b"); err != nil {
		t.Fatal(err)
	}
	if err := op.Close(); err != nil {
		t.Fatal(err)
	}
	cfg.Admins = []string{"bob"}
	srv, err := chatcore.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() { srv.Close(); <-served }()
	host, port, _ := net.SplitHostPort(ln.Addr().String())

	alice := startClient(t, "alice")
	bob := startClient(t, "bob")
	defer alice.stop()
	defer bob.stop()

	bob.do("/connect "+host+" "+port, "connected to ")
	bob.do("/login bob pw-b", "logged in as bob")
	bob.do("/addchannel general", "channel general (id 1)")
	bob.do("/join 1", "joined general")
	bob.do("an earlier message", "[You] an earlier message")

	alice.do("/help", "/join <channel_id>")
	alice.do("/login alice pw", "error: not connected")
	alice.do("/connect "+host+" "+port, "connected to ")
	alice.do("/adduser alice pw-a", "user alice created (id 2)")
	alice.do("/login alice wrong", "error: Wrong username or password")
	alice.do("/login alice pw-a", "logged in as alice")
	alice.do("/channels", "  1 general")
	alice.do("/join x", "invalid <channel_id>")
	alice.do("/join 1", "joined general")
	alice.expect("[User::bob] an earlier message") // the history shown on join, with the author's name
	bob.expect("* alice joined general")
	alice.do("hello, bob", "[You] hello, bob")
	bob.expect("[User::alice] hello, bob")
	bob.do("hi alice", "[You] hi alice")
	alice.expect("[User::bob] hi alice")
	alice.do("/logout", "logged out")
	bob.expect("* alice logged out")
	alice.do("/frobnicate", "unknown command: frobnicate")
	alice.do("/login alice pw-a", "logged in as alice")
	// The refusal is printed by the reading goroutine, "shutdown sent" by
	// the typing one: either may come first, so only the refusal is awaited.
	alice.do("/shutdown", "server: Not allowed.") // alice is no administrator
	bob.do("/shutdown", "shutdown sent")
	// The others are told; the sender's own notice may race with the
	// connection's end (the client prints what it reads before it sees the
	// end), so it is not waited for.
	alice.expect("server: Server shutting down.")
	if err := <-served; err == nil {
		t.Error("Serve returned nil after /shutdown; want lab.ErrServerClosed")
	}
	served <- nil // for the deferred Close
	alice.do("/exit", "")
}

// lineClient runs the line mode with a pipe for input and one for output.
type lineClient struct {
	t     *testing.T
	name  string
	in    *io.PipeWriter
	lines chan string
	done  chan error
}

func startClient(t *testing.T, name string) *lineClient {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &lineClient{t: t, name: name, in: inW, lines: make(chan string, 100), done: make(chan error, 1)}
	go func() {
		err := run(inR, outW, "")
		outW.Close()
		c.done <- err
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	return c
}

// do types line and waits for output containing want ("" = nothing to wait for).
func (c *lineClient) do(line, want string) {
	c.t.Helper()
	c.in.Write([]byte(line + "\n"))
	if want != "" {
		c.expect(want)
	}
}

// expect waits for an output line containing want.
func (c *lineClient) expect(want string) {
	c.t.Helper()
	var seen []string
	deadline := time.After(testkit.IOTimeout)
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("%s: output ended; want a line containing %q; got:\n  %s", c.name, want, strings.Join(seen, "\n  "))
			}
			if strings.Contains(line, want) {
				return
			}
			seen = append(seen, line)
		case <-deadline:
			c.t.Fatalf("%s: no line containing %q within %v; got:\n  %s", c.name, want, testkit.IOTimeout, strings.Join(seen, "\n  "))
		}
	}
}

func (c *lineClient) stop() {
	c.in.Close()
	<-c.done
	for range c.lines {
	}
}
