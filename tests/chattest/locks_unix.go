//go:build unix

package chattest

import (
	"serverlab/tests/testkit"
	"serverlab/tools/given/wire"
)

// checkQueryRefreshLockFree: a QUERY_USER that waits for the users file
// holds up no one else (exercise 2.4). The file is made to hang, as in
// checkSlowUsersFile, by a FIFO nobody writes in its place; while kim's
// query re-reads it, bob's broadcast must still reach carol. A server that
// refreshes the file under s.mu blocks every broadcast (which takes s.mu for
// its list of receivers) for as long as the disk is slow.
func checkQueryRefreshLockFree(k *testkit.T, impl Impl) {
	k.Helper()
	if !impl.GoroutinePerClient {
		return
	}
	e := start(k, impl, Config{}, "kim", "bob", "carol")
	kim, bob, carol := e.loginAs("kim"), e.loginAs("bob"), e.loginAs("carol")
	_, release, ok := e.hangUsersFile("a query that waits for the users file")
	if !ok {
		return
	}

	kim.SendFrame(wire.Frame{Type: wire.QueryUser, Sender: "kim", Target: "x"})
	if !waitBlockedInRefresh(k) {
		k.Fatalf("kim sent QUERY_USER and the users file hangs when opened (a FIFO nobody writes); no goroutine "+
			"of the server was reading it %v later: the list must be read from the file as it is now "+
			"(s.users.Refresh)", testkit.IOTimeout)
	}
	hi := broadcastFrame("bob", everyone, []byte("hi while kim's list is read"))
	bob.SendFrame(hi)
	expect(k, carol, "carol", hi, "kim's QUERY_USER was waiting for the users file (a FIFO nobody writes); "+
		"bob then sent a BROADCAST. Likely cause of nothing arriving: the users file is read with the server's "+
		"mutex held (s.users.Refresh under s.mu), so every broadcast waits for the disk: refresh first, then "+
		"take s.mu to read who is online")
	expect(k, kim, "kim", hi, "bob's BROADCAST while kim's QUERY_USER waited for the users file")
	release()
	// What the list holds depends on what the FIFO gave the read (nothing);
	// that it comes is what matters here.
	if got, err := kim.TryReadFrame(); err != nil || got.Type != wire.QueryUser || got.Target != "kim" {
		k.Fatalf("kim's QUERY_USER, once the users file answered: want a QUERY_USER reply to kim, got %v (%s)",
			brief(got), testkit.Describe(err))
	}
}
