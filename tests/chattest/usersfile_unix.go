//go:build unix

package chattest

import (
	"os"
	"path/filepath"
	"syscall"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/wire"
)

// hangUsersFile puts, in the place of e's users file, a FIFO nobody writes:
// the server's next Refresh blocks opening it, for as long as the check
// likes. restore puts the real file back (later Refreshes find it);
// release restores it if need be and opens the FIFO for writing, which lets
// the blocked open return. release also runs at cleanup, before the
// server's Close, which waits for what is blocked. ok is false, and the
// check (what) is skipped, where no FIFO can be made.
func (e *env) hangUsersFile(what string) (restore, release func(), ok bool) {
	k := e.k
	k.Helper()
	dir := filepath.Dir(e.users)
	real, fifo := filepath.Join(dir, "users.real"), filepath.Join(dir, "users.fifo")
	if err := testkit.Mkfifo(fifo, 0o600); err != nil {
		k.Logf("not checking %s: mkfifo: %v", what, err)
		return nil, nil, false
	}
	if err := testkit.Rename(e.users, real); err != nil {
		k.Fatalf("test bug: %v", err)
	}
	if err := testkit.Link(fifo, e.users); err != nil {
		k.Fatalf("test bug: %v", err)
	}
	restored, released := false, false
	restore = func() {
		if !restored {
			restored = true
			if err := testkit.Rename(real, e.users); err != nil {
				k.Fatalf("test bug: %v", err)
			}
		}
	}
	release = func() {
		if !released {
			released = true
			restore()
			if f, err := testkit.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
		}
	}
	k.Cleanup(release)
	return restore, release, true
}

// checkSlowUsersFile: a login that waits for the users file holds up that
// login only (a server of goroutines; an event loop reads the file on its
// loop and is not asked this). The users file is made to hang by putting a
// FIFO nobody writes in its place: a login's Refresh then blocks opening it,
// for as long as the check likes, and the check looks at what still works
// meanwhile. It finds two mistakes:
//
//   - the file read under s.mu (a lock held across I/O): a connection whose
//     first frame is not LOGIN must still be closed at once, which takes s.mu
//     (track, untrack);
//   - the name claimed before the password is checked: a wrong-password login
//     in flight must not lock the right one out.
func checkSlowUsersFile(k *testkit.T, impl Impl) {
	k.Helper()
	if !impl.GoroutinePerClient {
		return
	}
	e := start(k, impl, Config{}, "kim", "lee")
	e.loginAs("kim") // the server has read the file: what follows is a refresh
	restore, release, ok := e.hangUsersFile("a slow users file")
	if !ok {
		return
	}

	wrong := k.Dial(e.srv)
	wrong.SendFrame(loginFrame("lee", "wrong"))
	if !waitBlockedInRefresh(k) {
		k.Fatalf("lee sent a LOGIN and the users file hangs when opened (a FIFO nobody writes); no goroutine of "+
			"the server was reading it %v later: authenticate must re-read the file at every login "+
			"(s.users.Refresh), so that it answers from the file as it is now", testkit.IOTimeout)
	}

	// A lock held across the read: nothing else that needs s.mu can happen.
	other := k.Dial(e.srv)
	other.Write(testkit.Encode(wire.Frame{Type: wire.Broadcast, Sender: "kim", Target: everyone, Payload: []byte("hi")}),
		"a BROADCAST before logging in")
	other.NetConn().SetReadDeadline(time.Now().Add(testkit.IOTimeout))
	var buf [1]byte
	if _, err := other.NetConn().Read(buf[:]); !testkit.IsClosed(err) {
		k.Fatalf("while lee's login waited for the users file, a new connection sent a BROADCAST as its first "+
			"frame: want it closed at once, got %s.\nhint: the server's mutex must not be held while the users "+
			"file is read (authenticate outside s.mu; join takes it for one test and one change)", testkit.Describe(err))
	}

	// The file is back; lee logs in with the right password while the wrong
	// one is still in flight.
	restore()
	right := k.Dial(e.srv)
	right.SendFrame(loginFrame("lee", password("lee")))
	waitQueuedForRefresh(k) // the right login waits behind the wrong one's read, or was answered already
	release()
	expect(k, right, "lee", loginReply("lee", replyOK), "lee logged in with the right password while a login "+
		"of lee with a wrong password waited for the users file (released after): a name is claimed (join) only "+
		"once the password is checked, or wrong-password logins in flight lock the right one out")
	expect(k, wrong, "lee", loginReply("lee", replyFail), "lee's login with a wrong password, once the users file answered")
}

// waitQueuedForRefresh waits until a goroutine of the server waits for the
// users cache's lock in Refresh (a login queued behind one that reads the
// file), for testkit.IOTimeout at most: a server that answered the login
// without reading the file has no such goroutine, and its answer tells.
func waitQueuedForRefresh(k *testkit.T) {
	deadline := time.Now().Add(testkit.IOTimeout)
	for time.Now().Before(deadline) {
		for _, g := range testkit.Goroutines() {
			if g.State == "sync.Mutex.Lock" && hasFunc(g.Funcs, "serverlab/tools/given/users.(*Cache).Refresh(") {
				return
			}
		}
		time.Sleep(5 * time.Millisecond) // between looks at the server's goroutines, which no event announces
	}
}

// checkUnreadableUsersFile: when the users file cannot be read, a login is
// answered from what was read before (and the failure logged), not refused:
// a users file being replaced, or a disk error, must not lock everyone out.
// The file is replaced by a directory, which opens but cannot be read.
func checkUnreadableUsersFile(k *testkit.T, impl Impl) {
	k.Helper()
	if !impl.GoroutinePerClient {
		return
	}
	e := start(k, impl, Config{}, "max")
	checkFail(k, e, "max", "wrong", "a wrong password") // the server has read the file
	if err := testkit.Rename(e.users, e.users+".away"); err != nil {
		k.Fatalf("test bug: %v", err)
	}
	if err := testkit.Mkdir(e.users, 0o755); err != nil {
		k.Fatalf("test bug: %v", err)
	}
	c, got, err := e.tryLogin("max", password("max"))
	if err != nil || string(got.Payload) != replyOK {
		k.Fatalf("the users file cannot be read (a directory took its place); max, read from it before, logged in "+
			"with his password\n  want: %v\n   got: %v (%s)\nhint: if Refresh fails, log it and answer from the "+
			"cache (what was read before)", loginReply("max", replyOK), got, testkit.Describe(err))
	}
	c.Close()
}

// checkLoginAnsweredLate: a login whose answer cannot be written is no login.
// The users file hangs (a FIFO nobody writes) under a first login, and uma's
// login queues behind it for the users cache; her LOGIN came in time, but by
// the time the file is back and she is found, her login deadline has passed,
// so the server's write of OK fails. Either the server gave the answer a
// deadline of its own and she is told OK, or the login failed: she is told
// nothing, her connection is closed and her name is free. A server that
// ignores the failed write serves a client that was never told OK, under a
// name it holds (or, having released it, under none).
func checkLoginAnsweredLate(k *testkit.T, impl Impl) {
	k.Helper()
	if !impl.GoroutinePerClient {
		return
	}
	// Long enough for a LOGIN sent at once to be read on a busy machine
	// (IOTimeout grows with the load), short enough to wait out.
	timeout := testkit.IOTimeout / 10
	e := start(k, impl, Config{LoginTimeout: timeout}, "tess", "uma")
	e.loginAs("tess") // the server has read the file: what follows is a refresh
	restore, release, ok := e.hangUsersFile("a login answered late")
	if !ok {
		return
	}

	first := k.Dial(e.srv)
	first.SendFrame(loginFrame("tess", "wrong"))
	if !waitBlockedInRefresh(k) {
		k.Fatalf("a LOGIN was sent and the users file hangs when opened (a FIFO nobody writes); no goroutine of "+
			"the server was reading it %v later: authenticate must re-read the file at every login "+
			"(s.users.Refresh), so that it answers from the file as it is now", testkit.IOTimeout)
	}
	restore() // the next Refresh finds the file again
	uma := k.Dial(e.srv)
	uma.SendFrame(loginFrame("uma", password("uma")))
	waitQueuedForRefresh(k)
	// Not synchronisation: uma's login deadline was set before her login
	// queued, and this lets it pass while she waits for the users file.
	time.Sleep(timeout)
	release()
	first.Close()

	got, err := uma.TryReadFrame()
	switch {
	case err == nil && testkit.FrameDiff(loginReply("uma", replyOK), got) == "":
		return // the answer had a deadline of its own: a login like any other
	case err == nil:
		k.Fatalf("uma's login (registered, right password) waited for the users file until her login deadline "+
			"(%v) had passed\n  want: %v, or her connection closed without an answer\n   got: %v",
			timeout, loginReply("uma", replyOK), got)
	case !testkit.IsClosed(err):
		k.Fatalf("uma's login (registered, right password) waited for the users file until her login deadline "+
			"(%v) had passed, so the server's answer could not be written (a write past the deadline fails)\n"+
			"  want: her connection closed (or OK, had the answer a deadline of its own)\n   got: %s, the "+
			"connection still open: the server is serving a client it never told OK\nhint: if writing the "+
			"answer fails, the login fails: release the name (s.leave) and return the error, so that the "+
			"connection is closed", timeout, testkit.Describe(err))
	}
	// Told nothing and closed: the name must be free again.
	e.loginAs("uma")
}
