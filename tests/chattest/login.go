package chattest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/users"
	"serverlab/tools/given/wire"
)

// Login checks exercise 2.1: a goroutine per connection, and the login
// exchange that every connection starts with.
func Login(t *testing.T, impl Impl) {
	k := testkit.New(t, "2.1")
	e := start(k, impl, Config{}, "alice", "bob", "carol", "gus", "hal")

	alice := e.loginAs("alice")
	// alice stays connected: an iterative server, still busy with her, would
	// never answer bob.
	bob := e.loginAs("bob")

	checkFail(k, e, "alice", "wrong", "a wrong password")
	checkFail(k, e, "carol", "wrong", "a wrong password (carol is registered and not online)")
	checkFail(k, e, "carol", password("carol")[:len(password("carol"))-1], "carol's password less its last byte")
	checkFail(k, e, "carol", password("carol")+"x", "carol's password and one more byte")
	checkFail(k, e, "mallory", "pw-mallory", "a name that is not in the users file")
	checkFail(k, e, "Carol", password("carol"), "\"Carol\" (names are compared bytewise: carol is registered, Carol is not)")
	checkFail(k, e, "alice", password("alice"), "the name of a user who is online already (the newcomer is refused)")
	checkFail(k, e, "alice", password("alice"), "alice again: the refused newcomer must not have taken over her name")
	checkFirstFrameNotLogin(k, e)
	checkGoroutinePerClient(k, e)

	e.register("dave")
	e.loginAs("dave") // registered after the server started

	checkNameFreedOnLeave(k, e, alice)
	checkProtocolErrorsAfterLogin(k, e, bob)
	checkLoginTimeout(k, impl)
	checkZeroConfig(k, impl)
	checkMissingUsersFile(k, impl)
	checkOriginalsUsersFile(k, impl)
	checkLoginCost(k, impl)
	checkUsersFileFollowed(k, impl)
	checkServeRules(k, impl) // servecontract.go
	checkSlowUsersFile(k, impl)
	checkLoginAnsweredLate(k, impl)
	checkUnreadableUsersFile(k, impl)
	checkLastWords(k, impl) // lastwords.go
}

// checkLoginCost: with a users file at its limit (users.MaxUsers users), a
// login must not read the whole file again: the file is read once, and then
// only what is appended. Re-reading it at every login let a flood of
// registrations make every login slow (and, in an event loop, every
// client). The check counts the bytes the server's process reads (Linux's
// /proc/PID/io, rchar).
func checkLoginCost(k *testkit.T, impl Impl) {
	k.Helper()
	if _, err := readBytes(); err != nil {
		k.Logf("not checking what a login reads: %v", err)
		return
	}
	var b strings.Builder
	for i := range users.MaxUsers - 1 {
		b.WriteString(users.User{Name: fmt.Sprintf("filler%05d", i), Password: "pw", IP: "127.0.0.1", Port: 1}.Line())
	}
	e := start(k, impl, Config{}, "zoe")
	if err := testkit.WriteFile(e.users, []byte(users.User{Name: "zoe", Password: password("zoe"), IP: "127.0.0.1",
		Port: 1}.Line()+b.String()), 0o600); err != nil {
		k.Fatalf("test bug: %v", err)
	}
	size := int64(b.Len())
	e.loginAs("zoe").Close() // the server may read the whole file once: now
	const logins = 30
	before, _ := readBytes()
	for range logins {
		checkFail(k, e, "zoe", "wrong", "a wrong password")
	}
	after, _ := readBytes()
	if read := after - before; read > size {
		k.Fatalf("with a users file of %d users (%d bytes), %d logins made this process read %d bytes: about %d "+
			"times the file. Read the file once and then only what is appended (users.Cache), not at every login",
			users.MaxUsers, size, logins, read, read/size)
	}
}

// readBytes is the number of bytes the server's process has read so far
// (rchar).
func readBytes() (int64, error) {
	b, err := os.ReadFile(testkit.ServerProc() + "/io")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "rchar: "); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, errors.New("/proc/PID/io has no rchar")
}

// checkOriginalsUsersFile: a users file as the original discovery server
// writes it, which records whatever it is sent: a name with a space (a line
// of five fields), the names "server" and "ALL", a name with a zero-width
// space, one with a Cyrillic letter among Latin ones, a password over the
// limit, and a last line without its newline.
// Each bad line costs that line only: the users on the other lines log in
// (the unterminated last one too, as in every reader); nobody logs in as a
// bad line's name.
func checkOriginalsUsersFile(k *testkit.T, impl Impl) {
	k.Helper()
	e := start(k, impl, Config{})
	bad := []string{
		"mary ann " + password("mary") + " 127.0.0.1 2",
		wire.ServerName + " " + password(wire.ServerName) + " 127.0.0.1 3",
		wire.Everyone + " " + password(wire.Everyone) + " 127.0.0.1 4",
		"ali\u200bce " + password("ali\u200bce") + " 127.0.0.1 5",
		"\u0430lice " + password("\u0430lice") + " 127.0.0.1 5", // a Cyrillic а: mixed scripts
		"long " + strings.Repeat("p", users.MaxPassword+1) + " 127.0.0.1 6",
	}
	content := users.User{Name: "alice", Password: password("alice"), IP: "127.0.0.1", Port: 1}.Line() +
		strings.Join(bad, "\n") + "\n" +
		users.User{Name: "bob", Password: password("bob"), IP: "127.0.0.1", Port: 7}.Line() +
		"tess " + password("tess") + " 127.0.0.1 8" // a valid last line without its '\n': kept
	if err := testkit.WriteFile(e.users, []byte(content), 0o600); err != nil {
		k.Fatalf("test bug: %v", err)
	}
	e.loginAs("alice")
	e.loginAs("bob")
	e.loginAs("tess")
	for _, name := range []string{"mary", wire.ServerName, wire.Everyone, "ali\u200bce", "\u0430lice"} {
		checkFail(k, e, name, password(name), fmt.Sprintf("%q, whose line in the users file is not a valid user "+
			"(the file: %q)", name, content))
	}
	checkFail(k, e, "long", strings.Repeat("p", users.MaxPassword+1), "a password over users.MaxPassword bytes")
}

// checkFail: a refused login gets FAIL and the connection is closed.
func checkFail(k *testkit.T, e *env, name, pw, what string) {
	k.Helper()
	c := k.Dial(e.srv)
	c.SendFrame(loginFrame(name, pw))
	expect(k, c, name, loginReply(name, replyFail), "login with "+what)
	c.ExpectClosed()
}

// checkGoroutinePerClient: many connections log in with one name at the same
// moment; exactly one gets OK. join must check and claim the name under one
// lock: a check under the lock and an insert under another lets several
// through.
//
// Such a window is short, so the check makes the logins meet in it: every
// connection first sends its LOGIN less the last byte, so each server
// goroutine has read the frame but one byte, then one loop sends the last
// bytes, so all of them finish their frames at once. It does so for several
// names in turn (loginRounds), and one round that lets two in is enough.
func checkGoroutinePerClient(k *testkit.T, e *env) {
	k.Helper()
	for round := range loginRounds {
		name := fmt.Sprintf("hal%d", round)
		e.register(name)
		if oks, got := concurrentLogins(k, e, name); oks != 1 {
			k.Fatalf("round %d of %d: %d connections logged in as %s at the same moment; %d got OK (answers: %q). "+
				"Want exactly one: check that the name is free and claim it under one lock",
				round+1, loginRounds, loginRacers, name, oks, got)
		}
	}
}

// How many names checkGoroutinePerClient races for, and how many connections
// race for each.
const (
	loginRounds = 24
	loginRacers = 16
)

// concurrentLogins has loginRacers connections log in as name at once; it
// returns how many got OK, and every answer.
func concurrentLogins(k *testkit.T, e *env, name string) (oks int, answers []string) {
	k.Helper()
	login := testkit.Encode(loginFrame(name, password(name)))
	head, last := login[:len(login)-1], login[len(login)-1:]
	conns := make([]*testkit.Conn, loginRacers)
	for i := range conns {
		conns[i] = k.Dial(e.srv)
		conns[i].Write(head, fmt.Sprintf("a LOGIN as %s less its last byte", name))
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	// The write deadline set by Write holds: the loop makes only the
	// system calls that finish the frames.
	for _, c := range conns {
		if _, err := c.NetConn().Write(last); err != nil {
			k.Fatalf("sending the last byte of a LOGIN as %s: %v%s", name, err, c.Context())
		}
	}
	for _, c := range conns {
		f, err := c.TryReadFrame()
		switch {
		case err != nil:
			answers = append(answers, testkit.Describe(err))
		case string(f.Payload) == replyOK:
			oks++
			answers = append(answers, replyOK)
		default:
			answers = append(answers, string(f.Payload))
		}
	}
	return oks, answers
}

// checkFirstFrameNotLogin: a connection whose first frame is not a LOGIN, or
// not a frame at all, is closed without a reply.
func checkFirstFrameNotLogin(k *testkit.T, e *env) {
	k.Helper()
	cases := []struct {
		what string
		send []byte
	}{
		{"a BROADCAST before logging in", testkit.Encode(wire.Frame{Type: wire.Broadcast, Sender: "carol", Target: everyone, Payload: []byte("hi")})},
		{"a QUERY_USER before logging in", testkit.Encode(wire.Frame{Type: wire.QueryUser, Sender: "carol"})},
		{"a REGISTRATION (that is the discovery server's)", testkit.Encode(wire.Frame{Type: wire.Registration, Sender: "carol", Payload: []byte("pw")})},
		{"a header with payload_length = 1<<30", testkit.RawHeader(int32(wire.Login), 1<<30, []byte("carol"), nil)},
		{"a header with payload_length = -1", testkit.RawHeader(int32(wire.Login), -1, []byte("carol"), nil)},
		{"a 32-byte sender without NUL", testkit.RawHeader(int32(wire.Login), 0, bytes.Repeat([]byte("c"), 32), nil)},
	}
	for _, c := range cases {
		conn := k.Dial(e.srv)
		conn.Write(c.send, c.what)
		conn.ExpectClosed()
	}
}

// checkNameFreedOnLeave: once alice's connection ends, her name is free again.
// The server learns of the close asynchronously, so a login may be refused
// for a moment; it must succeed before the deadline.
func checkNameFreedOnLeave(k *testkit.T, e *env, alice *testkit.Conn) {
	k.Helper()
	alice.Close()
	deadline := time.Now().Add(testkit.IOTimeout)
	var last string
	for time.Now().Before(deadline) {
		c, f, err := e.tryLogin("alice", password("alice"))
		if err == nil && testkit.FrameDiff(loginReply("alice", replyOK), f) == "" {
			c.Close()
			return
		}
		if err != nil {
			last = testkit.Describe(err)
			break
		}
		last = fmt.Sprint(f)
		if testkit.FrameDiff(loginReply("alice", replyFail), f) != "" {
			break
		}
		// FAIL: the server has not yet noticed that alice left; try again.
	}
	k.Fatalf("alice logged in, then closed her connection; logging in as alice again: want %v within %v, last answer: %s\n"+
		"hint: when a client's connection ends, remove it from the map of logged-in clients",
		loginReply("alice", replyOK), testkit.IOTimeout, last)
}

// checkProtocolErrorsAfterLogin: after login, a frame the server does not
// accept closes the connection, and so does a broken one.
func checkProtocolErrorsAfterLogin(k *testkit.T, e *env, bob *testkit.Conn) {
	k.Helper()
	bob.SendFrame(loginFrame("bob", password("bob")))
	bob.ExpectClosed()
	cases := []struct {
		who, what string
		send      []byte
	}{
		{"carol", "a frame of unknown type 99", testkit.Encode(wire.Frame{Type: 99, Sender: "carol"})},
		{"gus", "a header with payload_length = 64 KiB + 1", testkit.RawHeader(int32(wire.Broadcast), wire.MaxPayload+1, []byte("gus"), nil)},
	}
	for _, c := range cases {
		conn := e.loginAs(c.who)
		conn.Write(c.send, c.what)
		conn.ExpectClosed()
	}
}

// checkLoginTimeout: a connection that does not complete its LOGIN within
// Config.LoginTimeout is closed; one that did is not.
func checkLoginTimeout(k *testkit.T, impl Impl) {
	k.Helper()
	const timeout = 500 * time.Millisecond
	e := start(k, impl, Config{LoginTimeout: timeout}, "erin")
	silent := k.Dial(e.srv)
	half := k.Dial(e.srv)
	half.Write(testkit.Encode(loginFrame("erin", password("erin")))[:40], "the first 40 bytes of a LOGIN, then nothing")
	erin := e.loginAs("erin") // the others wait, erin need not
	for _, c := range []*testkit.Conn{silent, half} {
		c.ExpectClosed()
	}

	// Logged in, erin may stay quiet for as long as she likes: the login
	// deadline must be lifted. A probe connected after her login is closed
	// once its own login time is up, so by then hers has passed too.
	probe := k.Dial(e.srv)
	probe.ExpectClosed()
	erin.NetConn().SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	var buf [1]byte
	_, err := erin.NetConn().Read(buf[:])
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		k.Fatalf("erin logged in and then stayed quiet for longer than the login timeout (%v); want her connection "+
			"to stay open with nothing to read, got %s.\nhint: once logged in, clear the deadline set for the login "+
			"(conn.SetDeadline(time.Time{}))", timeout, testkit.Describe(err))
	}
}

// checkMissingUsersFile: without a users file nobody can log in, and the
// server carries on; once the file appears, its users can.
func checkMissingUsersFile(k *testkit.T, impl Impl) {
	k.Helper()
	e := start(k, impl, Config{})
	if err := testkit.Remove(e.users); err != nil && !errors.Is(err, os.ErrNotExist) {
		k.Fatalf("test bug: %v", err)
	}
	checkFail(k, e, "frank", password("frank"), "no users file at all")
	e.register("frank")
	e.loginAs("frank")
}
