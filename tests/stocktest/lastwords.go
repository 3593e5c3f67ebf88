package stocktest

import (
	"errors"
	"io"
	"strings"
	"syscall"
	"time"

	"serverlab/tests/testkit"
)

// lastWordsRounds is how many clients checkExitLastWords sends: a close with
// the client's bytes unread resets the connection nearly every time on Linux,
// and more than one round keeps a lucky schedule from hiding it.
const lastWordsRounds = 3

// lastWordsTail is how many bytes each client writes behind its exit: more
// than any socket buffer hides, and no more than a lingering server reads and
// discards before it closes (256 KiB in chapter 05).
const lastWordsTail = 192 << 10

// checkExitLastWords: answer, then close — the client must be able to read
// the answer. A client that pipelines "show", "exit" and more requests
// behind them in one write still has bytes unread in the server's kernel
// when the server closes after exit. A socket closed so sends a reset instead
// of the end of the stream, and the reset destroys the listing the client has
// not read yet. The server must shut its write side once the replies are
// sent, and read and discard, bounded, until the client's end of stream
// before it closes (chapter 05's linger).
//
// Chapter 04 closes an exiting connection at once by design (a lingering
// exit would hold one of its workers: checkExitDoesNotLinger), so only the
// event loop (not Threaded) is held to it.
func checkExitLastWords(k *testkit.T, impl Impl) {
	k.Helper()
	if impl.Threaded {
		return
	}
	srv, _, _ := newServer(k, impl, Config{SyncInterval: never}, market)
	m := newModel(parseStocks(k, market))
	want := m.apply(mustParse("show"))
	b := []byte("show\nexit\n" + strings.Repeat("show\n", lastWordsTail/5))
	what := `"show\nexit\n" and 192 KiB of "show\n" behind them, in one write`
	for range lastWordsRounds {
		c := k.Dial(srv)
		nc := c.NetConn()
		wrote := make(chan error, 1)
		go func() {
			nc.SetWriteDeadline(time.Now().Add(testkit.IOTimeout))
			_, err := nc.Write(b)
			wrote <- err
		}()
		text, _, err := readRecordN(c)
		if err != nil || text != want {
			k.Fatalf("sent %s, then read\n  want: the listing %q, then the end of stream\n   got: %q, %s%s",
				what, want, text, testkit.Describe(err), lastWordsHint(err))
		}
		nc.SetReadDeadline(time.Now().Add(testkit.IOTimeout))
		var buf [512]byte
		n, err := c.Reader().Read(buf[:])
		if n > 0 || !errors.Is(err, io.EOF) {
			k.Fatalf("sent %s, then read the listing\n  want: the end of stream\n   got: %d bytes %q, %s%s",
				what, n, buf[:n], testkit.Describe(err), lastWordsHint(err))
		}
		c.Close()
		<-wrote // the write ends, at the latest at its deadline
	}
}

// lastWordsHint names the likely cause of a failed last-words check.
func lastWordsHint(err error) string {
	if errors.Is(err, syscall.ECONNRESET) {
		return "\nhint: a reset, not the end of stream: the server closed its socket with the client's bytes " +
			"unread, and the kernel answers that with a reset, which destroys what the client has not read yet. " +
			"After the last words, shut the write side, drain what arrives (bounded in time and bytes), then close"
	}
	return ""
}
