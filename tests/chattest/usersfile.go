package chattest

import (
	"path/filepath"
	"strings"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/users"
)

// checkUsersFileFollowed: a login answers from the users file as it is now,
// not as it was: a user removed from it, or whose password changed, is
// refused, however often the server saw the old line. (A server that
// re-reads the file only for names it does not know keeps letting a removed
// user in.) The file is replaced, as an administrator's editor does.
func checkUsersFileFollowed(k *testkit.T, impl Impl) {
	k.Helper()
	e := start(k, impl, Config{}, "ivy", "jon")
	// A wrong password for each: the server has looked both up, so both are
	// in whatever it keeps, and neither is online (a session that ends is
	// freed late, and would be refused for that). Now ivy is removed and
	// jon's password changed.
	checkFail(k, e, "ivy", "wrong", "a wrong password")
	checkFail(k, e, "jon", "wrong", "a wrong password")
	jon := users.User{Name: "jon", Password: "new-" + password("jon"), IP: "127.0.0.1", Port: 40001}
	replaceFile(k, e.users, jon.Line())
	checkFailEventually(k, e, "ivy", password("ivy"),
		"ivy's password, after ivy was removed from the users file (replaced by one without her line)")
	checkFailEventually(k, e, "jon", password("jon"),
		"jon's old password, after the users file was replaced by one with another password for jon")
	c, got, err := e.tryLogin("jon", jon.Password)
	if err != nil || string(got.Payload) != replyOK {
		k.Fatalf("jon logged in with the new password of a users file that was replaced: want %v, got %v (%s)",
			loginReply("jon", replyOK), got, testkit.Describe(err))
	}
	c.Close()
}

// replaceFile writes content to a new file and renames it over path.
func replaceFile(k *testkit.T, path, content string) {
	k.Helper()
	tmp := filepath.Join(filepath.Dir(path), "users.new")
	if err := testkit.WriteFile(tmp, []byte(content), 0o600); err != nil {
		k.Fatalf("test bug: %v", err)
	}
	if err := testkit.Rename(tmp, path); err != nil {
		k.Fatalf("test bug: %v", err)
	}
}

// checkFailEventually is checkFail for a change the server may learn of a
// moment late (an event loop reads a replaced file over several turns): the
// login must be refused before testkit.IOTimeout.
func checkFailEventually(k *testkit.T, e *env, name, pw, what string) {
	k.Helper()
	deadline := time.Now().Add(testkit.IOTimeout)
	for {
		c, got, err := e.tryLogin(name, pw)
		if err == nil && string(got.Payload) == replyFail {
			return
		}
		if c != nil {
			c.Close()
		}
		if time.Now().After(deadline) {
			k.Fatalf("login with %s\n  want: %v\n   got: %v (%s)\n"+
				"hint: authenticate must look at the users file as it is now (s.users.Refresh before every "+
				"Lookup), not at what it held when the user last logged in", what, loginReply(name, replyFail), got,
				testkit.Describe(err))
		}
		time.Sleep(20 * time.Millisecond) // between tries: the server learns of the new file at its own pace
	}
}

// waitBlockedInRefresh waits until a goroutine of the server is blocked in
// users.Cache.Refresh, opening the users file (a FIFO nobody writes).
func waitBlockedInRefresh(k *testkit.T) bool {
	k.Helper()
	deadline := time.Now().Add(testkit.IOTimeout)
	for time.Now().Before(deadline) {
		for _, g := range testkit.Goroutines() {
			if g.State == "syscall" && hasFunc(g.Funcs, "serverlab/tools/given/users.(*Cache).Refresh(") &&
				hasFunc(g.Funcs, "os.Open") {
				return true
			}
		}
		time.Sleep(5 * time.Millisecond) // between looks at the server's goroutines, which no event announces
	}
	return false
}

func hasFunc(funcs []string, prefix string) bool {
	for _, f := range funcs {
		if strings.HasPrefix(f, prefix) {
			return true
		}
	}
	return false
}
