package chattest

import (
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"

	"serverlab/tests/testkit"
)

// lastWordsRounds is how many clients checkLastWords sends: a close with the
// client's bytes unread resets the connection nearly every time on Linux, and
// more than one round keeps a lucky schedule from hiding it.
const lastWordsRounds = 3

// lastWordsTail is how many bytes each client writes behind its refused
// login: more than any socket buffer hides, and no more than a lingering
// server reads and discards before it closes (256 KiB in chapter 05 and in
// tools/given/chatcore/guard).
const lastWordsTail = 192 << 10

// checkLastWords: answer, then close — the client must be able to read the
// answer. A client whose LOGIN is refused and that wrote more behind it
// before it could know (here: more wrong guesses, lastWordsTail bytes of
// them, in one write) still has bytes unread in the server's kernel when the
// server closes. A socket closed so sends a reset instead of the end of the
// stream, and the reset destroys the FAIL the client has not read yet: it
// never learns why it was cut off. The server must shut its write side after
// the FAIL and read and discard, bounded, until the client's end of stream
// before it closes (chapter 05's linger, chapter 03's lingering close).
//
// Chapter 02's TODOs promise FAIL and a close, not a lingering close: its
// server (GoroutinePerClient) is not held to it.
func checkLastWords(k *testkit.T, impl Impl) {
	k.Helper()
	if impl.GoroutinePerClient {
		return
	}
	e := start(k, impl, Config{LoginTimeout: time.Minute}, "carol")
	guess := testkit.Encode(loginFrame("carol", "wrong"))
	var b []byte
	for len(b) < len(guess)+lastWordsTail {
		b = append(b, guess...)
	}
	what := fmt.Sprintf("%d LOGIN frames as carol with a wrong password (%d KiB) in one write", len(b)/len(guess), len(b)>>10)
	for round := range lastWordsRounds {
		lastWords(k, e, b, fmt.Sprintf("client %d of %d", round+1, lastWordsRounds), what)
	}
}

// lastWords writes b from a goroutine of its own (the server stops reading,
// and a write to a server that closed fails), reads the first frame, which
// must be carol's FAIL, and then wants a clean end of stream.
func lastWords(k *testkit.T, e *env, b []byte, who, what string) {
	k.Helper()
	c := k.Dial(e.srv)
	nc := c.NetConn()
	wrote := make(chan error, 1)
	go func() {
		nc.SetWriteDeadline(time.Now().Add(testkit.IOTimeout))
		_, err := nc.Write(b)
		wrote <- err
	}()
	defer func() { c.Close(); <-wrote }() // the write ends, at the latest at its deadline
	want := loginReply("carol", replyFail)
	got, err := c.TryReadFrame()
	if err != nil || testkit.FrameDiff(want, got) != "" {
		k.Fatalf("%s sent %s, then read\n  want: %v, then the end of stream\n   got: %v (%s)%s",
			who, what, want, got, testkit.Describe(err), lastWordsHint(err))
	}
	nc.SetReadDeadline(time.Now().Add(testkit.IOTimeout))
	var buf [512]byte
	for {
		n, err := c.Reader().Read(buf[:])
		if n > 0 {
			k.Fatalf("%s sent %s, then read the FAIL\n  want: the end of stream\n   got: %d more bytes: %q",
				who, what, n, buf[:n])
		}
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			k.Fatalf("%s sent %s, then read the FAIL\n  want: the end of stream\n   got: %s%s",
				who, what, testkit.Describe(err), lastWordsHint(err))
		}
	}
}

// lastWordsHint names the likely cause of a failed lastWords.
func lastWordsHint(err error) string {
	if errors.Is(err, syscall.ECONNRESET) {
		return "\nhint: a reset, not the end of stream: the server closed its socket with the client's bytes " +
			"unread, and the kernel answers that with a reset, which destroys what the client has not read yet. " +
			"After the last words, shut the write side, drain what arrives (bounded in time and bytes), then close"
	}
	return ""
}
