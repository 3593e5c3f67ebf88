package chattest

import (
	"log/slog"
	"path/filepath"
	"sync/atomic"

	"serverlab/tests/testkit"
	"serverlab/tools/given/lab"
	"serverlab/tools/given/users"
)

// checkServeRules: what TODO(ex 2.1) asks of Serve, checked in 2.1: accept
// errors that pass never end Serve (lab.Accept retries them, and a Close
// during its backoff ends the wait), a Serve after Close or a second Serve
// is refused, and a Close after Close returns at once. Before, only 2.6 ran
// them (the contract), so a 2.1 mistake such as ln.Accept for lab.Accept
// cost 2.6. The rules that hold a client across Close stay 2.6's: they need
// its closeConns. Chapter 02 only (impl.GoroutinePerClient): an event
// loop's accept is its chapter's own.
func checkServeRules(k *testkit.T, impl Impl) {
	k.Helper()
	if !impl.GoroutinePerClient {
		return
	}
	c := chatContract(k, impl)
	k.CheckServeRules(c)
	k.CheckSecondServe(c)
	k.CheckServeAfterClose(c.New(testkit.Logger()))
	k.CheckCloseDuringBackoff(c.New(testkit.Logger()))
}

// chatContract is the chat server's face for testkit's contract checks.
//
// Each probe logs in under a name of its own: a contract check may probe
// one server twice (second-serve), and a name the first probe used may
// still be logged in until the server has read that probe's EOF, which
// the server rightly answers FAIL.
func chatContract(k *testkit.T, impl Impl) testkit.Contract {
	var probes atomic.Int32
	return testkit.Contract{
		New: func(log *slog.Logger) lab.Server {
			dir := k.TempDir()
			file := users.User{Name: "holder", Password: password("holder"), IP: "127.0.0.1", Port: 2}.Line()
			for i := range maxProbes {
				name := probeName(i)
				file += users.User{Name: name, Password: password(name), IP: "127.0.0.1", Port: 10 + i}.Line()
			}
			testkit.WriteFile(filepath.Join(dir, "users.txt"), []byte(file), 0o600)
			srv, err := impl.NewServer(Config{UsersPath: filepath.Join(dir, "users.txt"), Logger: log})
			if err != nil {
				return brokenServer{err}
			}
			return srv
		},
		Probe: func(k *testkit.T, addr string) {
			contractLogin(k, addr, probeName(int(probes.Add(1)-1)%maxProbes)).Close()
		},
		Hold: func(k *testkit.T, addr string) { contractLogin(k, addr, "holder") },
	}
}
