package jobtest

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"

	"serverlab/tests/testkit"
	"serverlab/tools/given/jobs"
)

// lingerRounds is how many clients checkTooLargeLastWords sends. A server
// that closes at once loses the answers to every one of them on Linux (200
// of 200 in wrong5's demo), so a few rounds are plenty; more than one keeps
// a lucky scheduling from hiding it.
const lingerRounds = 5

// checkTooLargeLastWords: a client that pipelines a request, a line too
// large and more requests behind it (it wrote them before it could know)
// must read both answers and then a clean end of stream. The server stops
// reading at the line too large, so the client's later requests are still
// unread in the kernel when the connection ends: closed as it is, the socket
// sends a reset, and a reset destroys the answers the client has not read
// yet. The server must half-close and drain (linger) before it closes.
// checkTooLarge's clients send a few bytes after the line; this one sends
// 16 KB, as a pipelining client does, which no kernel buffer hides.
func checkTooLargeLastWords(k *testkit.T, impl Impl) {
	k.Helper()
	_, srv := newServer(k, impl, Config{Workers: 2, QueueCap: 8})
	tooLarge := strings.Repeat("x", jobs.MaxLine+1000)
	behind := strings.Repeat("PRIME 7\n", 2000)
	what := fmt.Sprintf(`"PRIME 7", a %d-byte line and 2000 "PRIME 7" lines, in one write`, len(tooLarge))
	for round := range lingerRounds {
		c := k.Dial(srv)
		c.Write([]byte("PRIME 7\n"+tooLarge+"\n"+behind), what)
		var got []string
		var err error
		for err == nil && len(got) < 3 {
			var line string
			if line, err = c.TryReadLine(); err == nil {
				got = append(got, line)
			}
		}
		okPrime, tooLargeErr := false, false
		for _, line := range got {
			okPrime = okPrime || (strings.HasPrefix(line, "OK ") && strings.HasSuffix(line, " prime"))
			tooLargeErr = tooLargeErr || (strings.HasPrefix(line, "ERROR ") && strings.HasSuffix(line, " "+msgTooLarge))
		}
		if len(got) != 2 || !okPrime || !tooLargeErr || !errors.Is(err, io.EOF) {
			k.Fatalf("client %d of %d sent %s, then read\n  want: \"OK <id> prime\" and \"ERROR <id> %s\" (either "+
				"order), then the end of stream\n   got: %q, then %s%s\n%s", round+1, lingerRounds, what,
				msgTooLarge, got, testkit.Describe(err), c.Context(), lastWordsHint(err))
		}
		c.Close()
	}
}

// lastWordsHint names the likely cause of a failed checkTooLargeLastWords.
func lastWordsHint(err error) string {
	if errors.Is(err, syscall.ECONNRESET) {
		return "hint: the connection ended with a reset, not the end of stream: the server closed its socket with " +
			"the client's later lines unread, and the kernel answers that with a reset, which destroys every " +
			"answer the client has not read yet (here it was fast enough; a client that reads later loses them). " +
			"After a line too large, half-close (CloseWrite) once the answers are written, then read and " +
			"discard what the client still sends, with a deadline and a byte limit, before closing"
	}
	return "hint: after a line too large the server answers every line it took, then ends the connection; " +
		"answers the client has not read must survive the close (half-close, drain, then close)"
}
