package chattest

import (
	"fmt"
	"path/filepath"
	"time"

	"serverlab/tests/testkit"
)

// defaultLoginTimeout is chapter 02's DefaultLoginTimeout: the lesson
// documents that Config.LoginTimeout = 0 means it.
const defaultLoginTimeout = 10 * time.Second

// checkZeroConfig: a server built with a zero Config (MaxPending,
// LoginTimeout and StallTimeout 0, as the flags pass "not set") uses the
// documented defaults. A New that tests `< 0` keeps LoginTimeout 0, and
// every connection's login deadline is now: nobody can log in (the shared
// check of testkit.ZeroConfig records the deadlines instead of waiting).
// Chapter 02 only (impl.GoroutinePerClient): an event loop times logins
// out on its own clock.
func checkZeroConfig(k *testkit.T, impl Impl) {
	k.Helper()
	if !impl.GoroutinePerClient {
		return
	}
	e := &env{k: k, users: filepath.Join(k.TempDir(), "users.txt")}
	e.register("zed")
	srv, err := impl.NewServer(Config{UsersPath: e.users, Logger: testkit.Logger()})
	if err != nil {
		k.Fatalf("NewServer(Config{UsersPath: …}): %v, want a server with the default configuration", err)
	}
	k.ZeroConfig(srv, func(s *testkit.Server) error {
		e.srv = s
		c, got, err := e.tryLogin("zed", password("zed"))
		if err != nil {
			return fmt.Errorf("sent a LOGIN of zed, want %v, got %s", loginReply("zed", replyOK), testkit.Describe(err))
		}
		defer c.Close()
		if want := loginReply("zed", replyOK); testkit.FrameDiff(want, got) != "" {
			return fmt.Errorf("sent a LOGIN of zed, want %v, got %v", want, got)
		}
		return nil
	}, testkit.ZeroDefault{Field: "LoginTimeout", Default: defaultLoginTimeout,
		Setters: []string{"SetDeadline", "SetReadDeadline"}})
}
