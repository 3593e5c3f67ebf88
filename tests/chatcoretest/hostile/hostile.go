// Package hostile is the hostile conformance suite of the chatcore family:
// the attacks that every chatcore server must survive, whatever keeps its
// data (chapter 07's SQLite, chapter 08's NATS). It is run the way the
// server contract is: each chapter's suite hands it a Start — a function
// that serves a fresh server of the chapter with the limits a check asks
// for — and calls each group of checks from the exercise that owns the
// behaviour, so that a server that fails one loses that exercise's points:
//
//	hostile.Connections(k, start) // pre-auth deadlines, frame budgets, connection caps
//	hostile.Accounts(k, start)    // names, id lists, the login throttle
//	hostile.Channels(k, start)    // channel names and caps
//	hostile.ChannelCapRace(k, shared) // the channel cap, many users at once, on servers sharing a store
//	hostile.Output(k, start)      // the outbox bounded in bytes, and all of them; history in one frame
//
// Every figure an attack is sized by comes from issue 35's probe of the
// course's servers: 5,000 idle pre-auth connections never closed; 600
// partial 1 MiB frames taking a server from 20 to 677 MiB; 9 addresses × 512
// idle connections filling the 4,096 cap; 15,007 channels in 11 s leaving
// the channel list unanswered; 10 non-reading history clients holding 529
// MiB; a login cache that let a throttled address test 20,000 passwords a
// second. The checks use small limits, so each proves its property in a
// second or two; docs/chatcore.md ("Limits") gives the defaults and why.
//
// "Many addresses" are 127.0.0.x: Linux routes all of 127.0.0.0/8 to the
// loopback; where the machine cannot dial from one, the check that needs it
// is skipped, and says so.
package hostile

import (
	"testing"
	"time"

	"serverlab/tests/testkit"
)

// Limits are what a check sets on the server it starts; zero means the
// server's default. Their meanings are the chapters' Config fields of the
// same names (docs/chatcore.md, "Limits").
type Limits struct {
	LoginTimeout          time.Duration // to log in, from the start or the last logout
	IdleTimeout           time.Duration // for a started frame to arrive whole
	WriteTimeout          time.Duration // one write to a client
	MaxConnections        int           // open connections, in all
	MaxConnsPerAddress    int           // open connections from one address
	PreAuthBudget         int           // bytes of large frames being read by connections not logged in
	InputBudget           int           // bytes of large frames being read by all connections
	MaxPending            int           // bytes queued for one connection
	OutputBudget          int           // bytes queued for all connections together
	HistoryReads          int           // GetChats read from the store at once
	MaxChannels           int           // channels of the server
	MaxChannelsPerUser    int           // channels one user may create
	MaxChannelsPerAddress int           // channels the users of one address may create
	MaxStoreBytes         int           // what the chat messages may make the store hold (08: MaxStreamBytes)
	AddressFailures       int           // failed logins of one address per FailureWindow
	FailureWindow         time.Duration
	MaxMessage            int           // a chat message's content, in bytes
	PresenceBurst         int           // presence events sent to one connection at once
	PresenceRate          int           // a second, that refill its budget
	ChatBurst             int           // chat bytes one user may write at once
	ChatRate              int           // a second, that refill its budget
	HashWait              time.Duration // the longest a line's first password hash waits for its turn
	BurstHash             bool          // each password hash a few milliseconds (chapter 07's BurstHash)
}

// Start serves a fresh server of the chapter, with its data in a fresh
// place, configured with l, for the rest of k's check (it is closed at k's
// cleanup), and returns the address it listens on.
type Start func(k *testkit.T, l Limits) (addr string)

// run runs one check as a subtest of k, named "hostile/"+name, with a
// harness of its own (watchdog, leak check) for the same exercise. Once a
// check of the exercise has failed, the rest are skipped: the exercise is
// lost already, and each check of an unsolved exercise would wait out its
// deadlines, together past the exercise's time limit (a timeout, where the
// cause is "failed").
func run(k *testkit.T, name string, f func(k *testkit.T)) {
	k.Helper()
	if k.Failed() {
		k.Logf("hostile/%s: not run, since a check of exercise %s failed already", name, k.Exercise())
		return
	}
	k.Run("hostile/"+name, func(t *testing.T) { f(testkit.New(t, k.Exercise())) })
}
