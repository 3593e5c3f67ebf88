package jobtest

import (
	"bufio"
	"bytes"
	"fmt"
	"time"

	"serverlab/tests/judge"
	"serverlab/tests/testkit"
)

// checkLastAnswersSent: the answers still waiting when a connection's last
// reference goes are sent before it closes. The client sends its lines,
// half-closes and reads nothing, so the writer is stuck in a Write with
// answers waiting behind it; the last job is held until the reader has
// seen the end of the stream, then let go, and only once the server has
// settled (the job's reference, the last, is gone) does the client read. A
// writer that stops when the last reference goes, without looking at what
// still waits, drops the answers queued behind its write: whether that
// shows depends on who is first otherwise, so the check orders it.
func checkLastAnswersSent(k *testkit.T, impl Impl) {
	k.Helper()
	// Their answers (about 170 KB) outgrow what the sockets hold.
	const n = 12000
	h := newHolder(n)
	k.OnAbort(h.releaseAll)
	defer h.releaseAll()
	_, srv := newServerOn(k, impl, Config{Workers: 2, QueueCap: 8, MaxPending: 1 << 20, WriteTimeout: time.Minute,
		OnJobStart: h.onJobStart}, k.ListenSmall())
	nc := k.DialSmall(srv.Addr)
	// The server reads and runs all n before the check goes on: on a machine
	// beside 16 busy loops that took longer than IOTimeout (20 s), so the
	// bulk steps are bounded by the watchdog's time instead.
	nc.SetWriteDeadline(time.Now().Add(testkit.WatchdogTimeout))
	if _, err := nc.Write(bytes.Repeat([]byte("PRIME 7\n"), n)); err != nil {
		k.Fatalf("sending %d \"PRIME 7\" lines to a server with MaxPending 1 MiB: %s (it must read them all)", n, testkit.Describe(err))
	}
	if tc, ok := nc.(interface{ CloseWrite() error }); ok {
		tc.CloseWrite()
	}
	deadline := time.After(testkit.WatchdogTimeout)
	for started := false; !started; {
		select {
		case id := <-h.started:
			started = id == n
		case <-deadline:
			k.Fatalf("a client sent %d \"PRIME 7\" lines and half-closed, reading nothing: job %d had not started "+
				"%v later (MaxPending 1 MiB: the server must read and run them all)", n, n, testkit.WatchdogTimeout)
		}
	}
	// Every goroutine blocked: the reader has seen the end of the stream,
	// the writer waits in a Write the client does not read.
	judge.Settle(testkit.IOTimeout)
	h.releaseAll()
	judge.Settle(testkit.IOTimeout) // job n answered, its reference (the last) gone

	r := bufio.NewReader(nc)
	seen := make([]bool, n+1)
	for i := range n {
		nc.SetReadDeadline(time.Now().Add(testkit.IOTimeout))
		line, err := r.ReadString('\n')
		id, result, good := parseOK(line[:max(0, len(line)-1)])
		if err != nil || !good || result != "prime" || id < 1 || id > n || seen[id] {
			k.Fatalf("a client sent %d \"PRIME 7\" lines, half-closed and read nothing until every job had been "+
				"answered (the last held until the reader had seen the end of the stream)\n  want: %d answers "+
				"\"OK <id> prime\", ids 1..%d each once\n   got: %s after %d answers, %s\n"+
				"hint: when the last reference goes, the writer must still send every answer waiting in the "+
				"outbox before it closes the connection (stop when the outbox is empty and no reference is left)",
				n, n, n, gotLine(line), i, testkit.Describe(err))
		}
		seen[id] = true
	}
}

// gotLine quotes what a read returned, or says it returned nothing.
func gotLine(line string) string {
	if line == "" {
		return "nothing"
	}
	return fmt.Sprintf("%q", line)
}
