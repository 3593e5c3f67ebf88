package chattest

import (
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/wire"
)

// checkQuietPastLoginTimeout: once logged in, a client keeps both directions
// of its connection however long it stays quiet. The login's deadline must
// be lifted for reading and for writing: a server that clears only the read
// deadline (SetReadDeadline(time.Time{})) keeps the write deadline of the
// login, and the first frame written to the client after LoginTimeout fails
// and cuts it off.
//
// No sleep decides when LoginTimeout has passed: a probe connected after
// both logins is closed once its own login time is up, so by then theirs has
// passed too.
func checkQuietPastLoginTimeout(k *testkit.T, impl Impl) {
	k.Helper()
	const timeout = 500 * time.Millisecond
	e := start(k, impl, Config{LoginTimeout: timeout}, "kim", "lee")
	kim := e.loginAs("kim")
	lee := e.loginAs("lee")
	probe := k.Dial(e.srv)
	probe.ExpectClosed()

	first := broadcastFrame("lee", everyone, []byte("still there, kim?"))
	send(k, lee, first)
	expectAfterQuiet(k, kim, "kim", first, "kim and lee logged in, then both stayed quiet for longer than "+
		"LoginTimeout ("+timeout.String()+"); then lee broadcast")
	second := broadcastFrame("kim", everyone, []byte("yes"))
	send(k, kim, second)
	expectAfterQuiet(k, lee, "lee", second, "kim and lee stayed quiet for longer than LoginTimeout ("+
		timeout.String()+"); lee broadcast, kim got it and broadcast an answer")
}

// expectAfterQuiet is expect, with the likely cause when nothing arrives.
func expectAfterQuiet(k *testkit.T, c *testkit.Conn, who string, want wire.Frame, why string) {
	k.Helper()
	got, err := c.TryReadFrame()
	if err != nil || testkit.FrameDiff(want, got) != "" {
		saw := brief(got).String()
		if err != nil {
			saw = testkit.Describe(err)
		}
		k.Fatalf("%s\n  want: %s receives %v\n   got: %s%s\n"+
			"hint: once logged in, lift the login's deadline in both directions (conn.SetDeadline(time.Time{})): "+
			"a read or write deadline left from the login cuts the client off at its first frame after LoginTimeout",
			why, who, brief(want), saw, c.Context())
	}
}
