//go:build linux

// Cases of chapters 01, 02 and 05: the chat system's tools and clients
// against the course's servers, and the course's against the chat system's,
// on the fixed ports 5000 and 6000.

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ---- chapters 01, 02, 05 and the chat system (fixed ports) ----

// chatPair is a discovery server and a chat server on the fixed ports,
// sharing one users.txt in dir.
type chatPair struct {
	discovery, chat *proc
	dir             string
	original        bool // the original's programs, not the course's
}

func (c *chatPair) stop() {
	if c.chat != nil {
		c.chat.stop()
	}
	if c.discovery != nil {
		c.discovery.stop()
	}
}

func (c *chatPair) alive(ev string, err error) (string, error) {
	if err != nil {
		return "", err
	}
	for _, p := range []*proc{c.discovery, c.chat} {
		if p.Alive() {
			continue
		}
		// The original chat servers die of SIGPIPE when a client disconnects
		// while they relay to it (a known defect the course fixes): after a
		// finished conversation that is the original's failure, not the tool's.
		if c.original && strings.Contains(p.exitStatus(), "broken pipe") {
			return ev + "; then the original " + p.Name() + " died of SIGPIPE as a client left (its known defect)", nil
		}
		return "", fmt.Errorf("%s; then %s died: %s", ev, p.Name(), p.exitStatus())
	}
	return ev + "; servers still up", nil
}

// startOurChat starts chapter 01's discovery server and chapter ch's chat
// server on the fixed ports.
func (h *harness) startOurChat(ctx context.Context, ch string) (*chatPair, error) {
	dir, err := h.tempDir("chat" + ch)
	if err != nil {
		return nil, err
	}
	users := filepath.Join(dir, "users.txt")
	c := &chatPair{dir: dir}
	if err := ensureFree(); err != nil {
		return nil, err
	}
	if c.discovery, err = h.start(ctx, dir, discoveryAddr, h.ours("discovery"), "-addr", discoveryAddr, "-users", users); err != nil {
		return nil, err
	}
	if c.chat, err = h.start(ctx, dir, chatAddr, h.ours("chat"+ch), "-addr", chatAddr, "-users", users); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// startOrigChat starts the original discovery server and chat server srv
// from a fresh folder (they read and write users.txt in their working folder).
func (h *harness) startOrigChat(ctx context.Context, srv string) (*chatPair, error) {
	dir, err := h.tempDir("origchat")
	if err != nil {
		return nil, err
	}
	c := &chatPair{dir: dir, original: true}
	if err := ensureFree(); err != nil {
		return nil, err
	}
	if c.discovery, err = h.start(ctx, dir, discoveryAddr, h.peer(chatDiscovery)); err != nil {
		return nil, err
	}
	if c.chat, err = h.start(ctx, dir, chatAddr, h.peer(srv)); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// ensureFree checks, before a case starts its servers, that nothing else
// holds the fixed ports: the original discovery server would not notice.
func ensureFree() error {
	for _, a := range []string{discoveryAddr, chatAddr} {
		if err := portFree(a); err != nil {
			return fmt.Errorf("%s is already taken before the case started its servers: %v", a, err)
		}
	}
	return nil
}

func chatLoadCase(ch string) func(context.Context, *harness) (string, error) {
	return func(ctx context.Context, h *harness) (string, error) {
		c, err := h.startOurChat(ctx, ch)
		if err != nil {
			return "", err
		}
		defer c.stop()
		const clients, msgs = 6, 4
		// --server-bin names no process: the script's CPU monitor must not
		// attach to some other chat_server on the machine.
		out, err := h.command(ctx, c.dir, nil, "python3", h.peer(chatLoadPy), "--clients", strconv.Itoa(clients),
			"--messages", strconv.Itoa(msgs), "--server-label", "ch"+ch, "--server-bin", "serverlab-no-such-process")
		if err != nil {
			return "", err
		}
		return c.alive(chatLoadVerdict(out, clients*msgs))
	}
}

func chatStressCase(ch string) func(context.Context, *harness) (string, error) {
	return func(ctx context.Context, h *harness) (string, error) {
		c, err := h.startOurChat(ctx, ch)
		if err != nil {
			return "", err
		}
		defer c.stop()
		out, err := h.command(ctx, c.dir, nil, "python3", h.peer(chatStressPy), "--start", "2", "--step", "4",
			"--max", "10", "--msgs", "3", "--server-label", "ch"+ch, "--server-bin", "serverlab-no-such-process")
		if err != nil {
			return "", err
		}
		return c.alive(stressVerdict(out, 3))
	}
}

// chatClientCase: two of the original's C++ chat_client talk through the
// course's servers; each must show what the other sent.
func chatClientCase(ch string) func(context.Context, *harness) (string, error) {
	return func(ctx context.Context, h *harness) (string, error) {
		c, err := h.startOurChat(ctx, ch)
		if err != nil {
			return "", err
		}
		defer c.stop()
		ev, _, err := h.cppClientScript(c.dir).run(ctx)
		return c.alive(ev, err)
	}
}

// cppClientScript drives the original's chat_client (it asks for the user
// name and password on stdin, and registers before it logs in).
func (h *harness) cppClientScript(dir string) clientScript {
	return clientScript{
		start: func(ctx context.Context, user string) (*interactive, error) {
			return h.interactive(ctx, dir, h.peer(chatClient))
		},
		login: func(ctx context.Context, it *interactive, user string) error {
			it.send(user + "\n" + "pw-" + user + "\n")
			return it.expect(ctx, "[OK] Logged into chat server.")
		},
		all: "[bob -> ALL]: hello from bob", private: "[alice -> YOU]: hi bob",
		spaced: "[bob -> ALL]:  two spaces", users: "Online Users",
	}
}

// chatDisplayCase: the same conversation between two chat_client through
// the original servers, ch01+ch02 and ch01+ch05; what each client displays
// must be the same line for line (prompts aside, whose number depends on
// timing).
func chatDisplayCase(ctx context.Context, h *harness) (string, error) {
	type setup struct {
		label string
		start func(context.Context) (*chatPair, error)
	}
	setups := []setup{
		{"original", func(ctx context.Context) (*chatPair, error) { return h.startOrigChat(ctx, chatThreaded) }},
		{"ch02", func(ctx context.Context) (*chatPair, error) { return h.startOurChat(ctx, "02") }},
		{"ch05", func(ctx context.Context) (*chatPair, error) { return h.startOurChat(ctx, "05") }},
	}
	var first map[string][]string
	for _, s := range setups {
		c, err := s.start(ctx)
		if err != nil {
			return "", err
		}
		_, outs, err := h.cppClientScript(c.dir).run(ctx)
		c.stop()
		if err != nil {
			return "", fmt.Errorf("%s: %v", s.label, err)
		}
		shown := map[string][]string{}
		for who, out := range outs {
			shown[who] = displayLines(out)
		}
		if first == nil {
			first = shown
			continue
		}
		for _, who := range []string{"alice", "bob"} {
			a, b := transcriptDiff(first[who], shown[who])
			if len(a)+len(b) > 0 {
				return "", fmt.Errorf("%s's display differs: original shows %q, %s shows %q", who, a, s.label, b)
			}
		}
	}
	return fmt.Sprintf("alice's %d and bob's %d display lines identical on the original, ch02 and ch05", len(first["alice"]), len(first["bob"])), nil
}

// displayLines is a chat_client's output without its "> " prompts and
// blank lines.
func displayLines(out string) []string {
	var ls []string
	for _, l := range strings.Split(out, "\n") {
		for strings.HasPrefix(l, "> ") {
			l = l[2:]
		}
		if l = strings.TrimRight(l, " >"); l != "" {
			ls = append(ls, l)
		}
	}
	return ls
}

// toolsChatCase: two course clients (tools/cmd/chat) through the original
// discovery and chat servers.
func toolsChatCase(srv string) func(context.Context, *harness) (string, error) {
	return func(ctx context.Context, h *harness) (string, error) {
		c, err := h.startOrigChat(ctx, srv)
		if err != nil {
			return "", err
		}
		defer c.stop()
		script := clientScript{
			start: func(ctx context.Context, user string) (*interactive, error) {
				return h.interactive(ctx, c.dir, h.ours("chat-client"), "-user", user, "-password", "pw-"+user,
					"-discovery", discoveryAddr, "-addr", chatAddr)
			},
			login: func(ctx context.Context, it *interactive, user string) error {
				return it.expect(ctx, "Logged in as "+user)
			},
			all: "[bob -> ALL]: hello from bob", private: "[alice -> YOU]: hi bob",
			spaced: "[bob -> ALL]:  two spaces", users: "bob",
		}
		ev, _, err := script.run(ctx)
		return c.alive(ev, err)
	}
}

// clientScript is the conversation both chat-client cases hold: alice and
// bob log in, bob broadcasts (once with a leading space, which must arrive
// intact), alice answers privately, alice lists the users, both quit.
type clientScript struct {
	start                       func(ctx context.Context, user string) (*interactive, error)
	login                       func(ctx context.Context, it *interactive, user string) error
	all, private, spaced, users string
}

func (s clientScript) run(ctx context.Context) (evidence string, outputs map[string]string, err error) {
	alice, err := s.start(ctx, "alice")
	if err != nil {
		return "", nil, err
	}
	defer alice.close()
	if err := s.login(ctx, alice, "alice"); err != nil {
		return "", nil, fmt.Errorf("alice: %v", err)
	}
	bob, err := s.start(ctx, "bob")
	if err != nil {
		return "", nil, err
	}
	defer bob.close()
	if err := s.login(ctx, bob, "bob"); err != nil {
		return "", nil, fmt.Errorf("bob: %v", err)
	}
	steps := []struct {
		who      *interactive
		line     string
		reader   *interactive
		want     string
		describe string
	}{
		{bob, "/all hello from bob", alice, s.all, "alice sees bob's broadcast"},
		{alice, "/msg bob hi bob", bob, s.private, "bob sees alice's private message"},
		{bob, "/all  two spaces", alice, s.spaced, "a leading space survives"},
		{alice, "/users", alice, s.users, "alice lists the users"},
	}
	var seen []string
	for _, st := range steps {
		st.who.send(st.line + "\n")
		if err := st.reader.expect(ctx, st.want); err != nil {
			return "", nil, fmt.Errorf("%s (after %q): %v", st.describe, st.line, err)
		}
		seen = append(seen, fmt.Sprintf("%q", st.want))
	}
	alice.send("/quit\n")
	bob.send("/quit\n")
	alice.close()
	bob.close()
	return "displayed " + strings.Join(seen, ", "), map[string]string{"alice": alice.output(), "bob": bob.output()}, nil
}

// interactive is a client program driven through its stdin, whose output is
// searched for expected text.
type interactive struct {
	cmd       *exec.Cmd
	stdin     io.WriteCloser
	mu        sync.Mutex
	out       strings.Builder
	grew      chan struct{} // signalled (non-blocking) on every output chunk
	closeOnce sync.Once
	done      chan struct{}
	h         *harness
	name      string
}

func (h *harness) interactive(ctx context.Context, dir string, argv ...string) (*interactive, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	w.Close()
	it := &interactive{cmd: cmd, stdin: stdin, grew: make(chan struct{}, 1), done: make(chan struct{}), h: h, name: filepath.Base(argv[0])}
	go func() {
		defer close(it.done)
		defer r.Close()
		br := bufio.NewReader(r)
		buf := make([]byte, 4096)
		for {
			n, err := br.Read(buf)
			if n > 0 {
				it.mu.Lock()
				it.out.Write(buf[:n])
				it.mu.Unlock()
				select {
				case it.grew <- struct{}{}:
				default:
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return it, nil
}

func (it *interactive) send(s string) { _, _ = io.WriteString(it.stdin, s) }

// expect waits (at most 5 s) until the output contains want.
func (it *interactive) expect(ctx context.Context, want string) error {
	timer := time.NewTimer(5 * time.Second)
	defer timer.Stop()
	for {
		it.mu.Lock()
		got := it.out.String()
		it.mu.Unlock()
		if strings.Contains(got, want) {
			return nil
		}
		select {
		case <-it.grew:
		case <-it.done:
			it.mu.Lock()
			got = it.out.String()
			it.mu.Unlock()
			if strings.Contains(got, want) {
				return nil
			}
			return fmt.Errorf("%s ended without showing %q; it showed %q", it.name, want, tail(got, 300))
		case <-timer.C:
			return fmt.Errorf("%s did not show %q within 5s; it showed %q", it.name, want, tail(got, 300))
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// output is everything the program wrote so far.
func (it *interactive) output() string {
	it.mu.Lock()
	defer it.mu.Unlock()
	return it.out.String()
}

// close ends the program (end of input, then SIGKILL after 2 s) and keeps
// its output for -v; closing twice is harmless.
func (it *interactive) close() {
	it.closeOnce.Do(it.closeNow)
}

func (it *interactive) closeNow() {
	it.stdin.Close()
	select {
	case <-it.done:
	case <-time.After(2 * time.Second):
		_ = syscall.Kill(-it.cmd.Process.Pid, syscall.SIGKILL)
		<-it.done
	}
	_ = it.cmd.Wait()
	it.mu.Lock()
	it.h.record(it.name, []byte(it.out.String()))
	it.mu.Unlock()
}

func loadgenChatCase(srv string) func(context.Context, *harness) (string, error) {
	return func(ctx context.Context, h *harness) (string, error) {
		c, err := h.startOrigChat(ctx, srv)
		if err != nil {
			return "", err
		}
		defer c.stop()
		out, err := h.command(ctx, c.dir, nil, h.ours("loadgen"), "chat", "-addr", chatAddr, "-discovery", discoveryAddr,
			"-clients", "5", "-requests", "5", "-json", "-quiet", "-timeout", "5s", "-duration", "15s")
		if err != nil && !strings.Contains(out, "{") {
			return "", err
		}
		return c.alive(loadgenVerdict(out))
	}
}

// usersFileCase: the original discovery server writes users.txt (here with
// a name containing a space, which it accepts); the course's chat server
// started on that file must admit the well-formed users, whatever the bad
// line costs.
func usersFileCase(ch string) func(context.Context, *harness) (string, error) {
	return func(ctx context.Context, h *harness) (string, error) {
		dir, err := h.tempDir("users" + ch)
		if err != nil {
			return "", err
		}
		if err := ensureFree(); err != nil {
			return "", err
		}
		disc, err := h.start(ctx, dir, discoveryAddr, h.peer(chatDiscovery))
		if err != nil {
			return "", err
		}
		for _, u := range []string{"alice", "two words", "bob"} {
			if got := oneShot(discoveryAddr, frame(tReg, u, "", "pw")); !strings.Contains(got, `payload="OK"`) {
				disc.stop()
				return "", fmt.Errorf("discovery_server: REG %q answered %s", u, got)
			}
		}
		disc.stop()
		file, _ := os.ReadFile(filepath.Join(dir, "users.txt"))
		h.record("users.txt", file)
		users := filepath.Join(dir, "users.txt")
		p, err := h.start(ctx, dir, chatAddr, h.ours("chat"+ch), "-addr", chatAddr, "-users", users)
		if err != nil {
			return "", err
		}
		defer p.stop()
		for _, u := range []string{"alice", "bob"} {
			if got := oneShot(chatAddr, frame(tLogin, u, "", "pw")); !strings.Contains(got, `payload="OK"`) {
				return "", fmt.Errorf("users.txt %q: LOGIN %s answered %s", file, u, got)
			}
		}
		return serverAlive(p, fmt.Sprintf("users.txt %q: alice and bob log in", file), nil)
	}
}

// oneShot sends one frame on a new connection and describes the first
// frame that comes back (or why none did).
func oneShot(addr string, f []byte) string {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return err.Error()
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.Write(f); err != nil {
		return err.Error()
	}
	var buf []byte
	tmp := make([]byte, 4096)
	for {
		if ev, _, ok := decodeEvent(buf); ok {
			return ev
		}
		n, err := c.Read(tmp)
		buf = append(buf, tmp[:n]...)
		if err != nil {
			if ev, _, ok := decodeEvent(buf); ok {
				return ev
			}
			return fmt.Sprintf("no frame (%v)", err)
		}
	}
}

func loadgenRegisterCase(ctx context.Context, h *harness) (string, error) {
	dir, err := h.tempDir("origdisc")
	if err != nil {
		return "", err
	}
	if err := ensureFree(); err != nil {
		return "", err
	}
	p, err := h.start(ctx, dir, discoveryAddr, h.peer(chatDiscovery))
	if err != nil {
		return "", err
	}
	defer p.stop()
	out, err := h.command(ctx, dir, nil, h.ours("loadgen"), "register", "-addr", discoveryAddr,
		"-clients", "4", "-requests", "10", "-json", "-quiet", "-timeout", "5s", "-duration", "15s")
	if err != nil && !strings.Contains(out, "{") {
		return "", err
	}
	ev, verr := loadgenVerdict(out)
	return serverAlive(p, ev, verr)
}
