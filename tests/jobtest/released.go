package jobtest

import (
	"net"
	"strings"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/jobs"
)

// releasedRounds is how many connections checkReleased opens, one after the
// other.
const releasedRounds = 600

// checkReleased: a connection's goroutines, descriptor and state go once it
// is finished, whatever its last line was. Every reference to a connection
// (its reader's, each queued job's) is released, so that its writer sends the
// last answer, closes it and ends: after many connections — a good line, a
// line that does not parse, a line too large — the server holds what it held
// before them.
func checkReleased(k *testkit.T, impl Impl) {
	k.Helper()
	_, srv := newServer(k, impl, Config{Workers: 2, QueueCap: 8})
	tooLarge := strings.Repeat("t", jobs.MaxLine+1) + "\n"
	lines := []struct{ send, want string }{
		{"PRIME 7\n", " prime"},
		{"HELLO 7\n", " " + msgUnsupported},
		{tooLarge, " " + msgTooLarge},
	}
	k.CheckReleased(`connections that each send one line ("PRIME 7", "HELLO 7" or a line too large), read its `+
		`answer and close`, releasedRounds, testkit.Released{HeapPerRound: 128, HeapSlack: 64 << 10}, func(i int) {
		l := lines[(i+len(lines))%len(lines)]
		nc, err := net.DialTimeout("tcp", srv.Addr, testkit.IOTimeout)
		if err != nil {
			k.Fatalf("connection %d of %d: dial: %v", i+1, releasedRounds, err)
		}
		defer nc.Close()
		nc.SetDeadline(time.Now().Add(testkit.IOTimeout))
		nc.Write([]byte(l.send))
		buf := make([]byte, 256)
		n, err := nc.Read(buf)
		if got := string(buf[:n]); !strings.HasSuffix(got, l.want+"\n") {
			k.Fatalf("connection %d of %d sent %q\n  want: an answer ending in %q\n   got: %q, %s",
				i+1, releasedRounds, abbreviate(l.send), l.want, got, testkit.Describe(err))
		}
	})
}
