package hostile

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// lastWordsRounds is how many clients each case of checkLastWords sends.
// A server that closes with the client's bytes unread sends a reset every
// time on Linux (20 of 20 in kill6b's probe of chapter 07), so a few
// rounds are plenty; more than one keeps a lucky schedule from hiding it.
const lastWordsRounds = 3

// lastWordsTail is what each client of checkLastWords sends after the
// bytes the server refuses: as much as a client that wrote its frame before
// it could know has in flight, more than any socket buffer hides, and no
// more than the course's servers read and discard before they close
// (guard.LingerBytes).
const lastWordsTail = 192 << 10

// checkLastWords: a server that refuses a client and ends its connection
// (Frame too large., Server busy. for a large frame past its budget, Too
// many failed logins…) stops reading, so the client's bytes behind the
// refused ones are still unread in the kernel when it closes; closed as it
// is, the socket sends a reset instead of the end of the stream, and a
// reset destroys every answer the client has not read yet: it never learns
// why it was cut off. Each client here writes the refused bytes and
// lastWordsTail more in one go, as a client that did not wait does, and
// must read the refusal and then a clean end of stream. The server must
// half-close and drain, bounded, before it closes (guard.Linger): chapter
// 03's lingering close.
func checkLastWords(k *testkit.T, start Start) {
	addr := start(k, Limits{PreAuthBudget: 128 << 10, LoginTimeout: time.Minute})
	tooLarge, _ := frameHead(proto.MaxFrame+1, int(proto.TypeGetChannelsRequest), `{"request_id":1}`, 0)
	overBudget, _ := frameHead(proto.MaxFrame, int(proto.TypeGetChannelsRequest), `{"request_id":1}`, 0)
	var guesses []byte
	for i := range 5 { // the default MaxLoginFailures
		guesses, _ = proto.AppendFrame(guesses, proto.AuthenticateRequest{RequestID: uint64(i + 1),
			Name: "last-words-nobody", Password: fmt.Sprintf("guess-%d", i)})
	}
	var heartbeats []byte
	for len(heartbeats) < lastWordsTail {
		heartbeats, _ = proto.AppendFrame(heartbeats, proto.HeartbeatRequest{RequestID: 99})
	}
	for _, cs := range []struct {
		what, want string
		refused    []byte
		tail       []byte
	}{
		{"the header of a frame of 1 MiB + 1 byte and " + kib(lastWordsTail) + " of its body",
			proto.MsgFrameTooLarge, tooLarge, make([]byte, lastWordsTail)},
		{"the header of a 1 MiB frame and " + kib(lastWordsTail) + " of its body, not logged in, with PreAuthBudget 128 KiB",
			proto.MsgServerBusy, overBudget, make([]byte, lastWordsTail)},
		{"5 logins with wrong passwords (MaxLoginFailures) and " + kib(len(heartbeats)) + " of heartbeats",
			proto.MsgTooManyFailures, guesses, heartbeats},
	} {
		for round := range lastWordsRounds {
			c := dial(k, addr, fmt.Sprintf("client %d of %d", round+1, lastWordsRounds))
			lastWords(k, c, append(append([]byte(nil), cs.refused...), cs.tail...), cs.what, cs.want)
		}
	}
}

// kib formats n bytes in KiB.
func kib(n int) string { return fmt.Sprintf("%d KiB", n>>10) }

// lastWords writes b (what says what it is) from a goroutine of its own —
// the server may stop reading it, and a write to a server that closed
// fails — while it reads frames until the end of the stream; the frames
// must include a 101 or 100 with text want, and the end must be a clean
// EOF.
func lastWords(k *testkit.T, c *client, b []byte, what, want string) {
	k.Helper()
	c.sent = append(c.sent, what)
	wrote := make(chan error, 1)
	go func() {
		c.nc.SetWriteDeadline(time.Now().Add(testkit.IOTimeout))
		_, err := c.nc.Write(b)
		wrote <- err
	}()
	defer func() { c.nc.Close(); <-wrote }() // the write ends, at the latest at its deadline
	deadline := time.Now().Add(testkit.IOTimeout)
	var got []string
	refused := false
	for {
		m, err := c.read(deadline)
		if err == nil {
			got = append(got, show(m))
			switch m := m.(type) {
			case proto.Error:
				refused = refused || m.Value == want
			case proto.ErrorResponse:
				refused = refused || m.Value == want
			}
			continue
		}
		if refused && errors.Is(err, io.EOF) {
			return
		}
		if len(got) > 4 {
			got = append(got[:2], fmt.Sprintf("(%d more)", len(got)-4), got[len(got)-2], got[len(got)-1])
		}
		k.Fatalf("%s: sent %s in one write, then read\n  want: %q (101 or 100), then the end of stream\n"+
			"   got: [%s], then %s%s\n%s", c.who, what, want, strings.Join(got, "; "), testkit.Describe(err),
			c.context(), lastWordsHint(err))
	}
}

// lastWordsHint names the likely cause of a failed lastWords.
func lastWordsHint(err error) string {
	if errors.Is(err, syscall.ECONNRESET) {
		return "hint: the connection ended with a reset, not the end of stream: the server closed its socket with " +
			"the client's bytes unread, and the kernel answers that with a reset, which destroys every answer the " +
			"client has not read yet (here it was fast enough to read some; a client that reads later loses " +
			"them). Once the last words are written, half-close (CloseWrite), read and discard what the client " +
			"still sends, with a deadline and a byte cap, then close: guard.Linger"
	}
	return "hint: a refused client is told why, then its connection ends; the answer must survive the close " +
		"(write it, half-close, drain with a deadline and a byte cap, then close: guard.Linger)"
}
