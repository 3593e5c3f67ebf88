package stocktest

import (
	"fmt"
	"strings"
	"testing"

	"serverlab/tests/testkit"
	"serverlab/tools/given/stockproto"
)

// Commands checks exercise 4.2: every reply of the stock protocol, exactly,
// each as one 8192-byte record; pipelined lines answered in order; an empty
// line after a command; exit closing only its own connection; CRLF; bad
// arguments; a listing too long for one record.
func Commands(t *testing.T, impl Impl) {
	k := testkit.New(t, "4.2")
	srv, _, _ := newServer(k, impl, Config{}, market)
	m := newModel(parseStocks(k, market))

	c := k.Dial(srv)
	checkOriginalClient(k, c, m)
	checkReplies(k, c, m)
	checkBadRequests(k, c)
	checkRandomRequests(k, c, m)
	checkPipelined(k, c, m)
	checkSplitLine(k, c, m)
	checkUnterminated(k, srv, m)
	checkExit(k, srv, m)
	checkExitLastWords(k, impl) // lastwords.go
	checkLineLimit(k, srv, m)
	checkLongListing(k, impl)
	checkBatching(k, impl)
}

// checkOriginalClient drives the server exactly as the original's client
// and benchmark do: write one request, read exactly 8192 bytes, print the C
// string at their start.
func checkOriginalClient(k *testkit.T, c *testkit.Conn, m *model) {
	k.Helper()
	for _, line := range []string{"show", "buy 5 1", "sell 5 1", "show"} {
		exchange(k, c, line, m.apply(mustParse(line)))
	}
}

// checkReplies walks through every reply of the table in docs/protocols.md §3.
func checkReplies(k *testkit.T, c *testkit.Conn, m *model) {
	k.Helper()
	checkServerTrades(k, c, m)
	// Blanks between tokens may be runs of spaces or tabs; CRLF is one line end.
	for _, line := range []string{"buy\t5\t1", "sell  5   1", "  show  ", "buy 5 1\r", "sell 5 1\r", "show\r"} {
		exchange(k, c, line, m.apply(mustParse(strings.TrimSuffix(line, "\r"))))
	}
	exchange(k, c, "", stockproto.PleaseType)
	exchange(k, c, "\r", stockproto.PleaseType)
}

// checkServerTrades walks through every reply a trade can get, then the edge of
// the counts' range (checkOverflow).
func checkServerTrades(k *testkit.T, c *testkit.Conn, m *model) {
	k.Helper()
	trades := []string{
		"buy 3 2",    // takes the last two
		"buy 3 1",    // NOT ENOUGH LEFT STOCK
		"buy 8 1",    // sold out from the start
		"buy 2 1",    // NO SUCH STOCK
		"sell 2 1",   // NO SUCH STOCK
		"sell 3 5",   // back in stock
		"buy 3 5",    // exactly all of it
		"sell 1 100", // more than the file had
		"buy 1 107",
		"buy 9 2147483647", // the largest argument: fine, just not enough
		"show",
	}
	for _, line := range trades {
		exchange(k, c, line, m.apply(mustParse(line)))
	}
	checkOverflow(k, c, m)
}

// checkOverflow: a count never passes the original's C int (2147483647): the
// sell that would is Invalid Argument and changes nothing, however many sells
// came before (the original's int wrapped: three sells of 2147483647 onto 50
// shares listed 6442450991 in a 64-bit server, or a negative count in C). Then
// the whole range is bought back down to zero.
func checkOverflow(k *testkit.T, c *testkit.Conn, m *model) {
	k.Helper()
	left := stockproto.MaxArg - m.order[m.index[4]].Count
	lines := []string{
		"sell 4 2147483647", "sell 4 2147483647", "sell 4 2147483647", // each would pass the limit
		fmt.Sprintf("sell 4 %d", left), // exactly to the limit
		"sell 4 1",                     // one past it
		"buy 4 2147483647",             // all of it: the count is 0 again
		"buy 4 1",
		fmt.Sprintf("sell 4 %d", stockproto.MaxArg-left), // back where it was
		"show",
	}
	for _, line := range lines {
		want := m.apply(mustParse(line))
		c.WriteLine(line)
		got, err := readRecord(c)
		if err != nil {
			k.Fatalf("want reply %q: %v%s", want, err, c.Context())
		}
		if got != want {
			k.Fatalf("wrong reply to %q with stock 4 at %d shares (a count may not pass %d, the original's "+
				"C int: a sell that would is Invalid Argument and changes nothing)\n  want: %q\n   got: %q%s",
				line, m.order[m.index[4]].Count, stockproto.MaxArg, want, got, c.Context())
		}
	}
}

// checkBadRequests: unknown commands (no prefix matching, case matters) and
// known commands with bad arguments. None of them may change a count.
func checkBadRequests(k *testkit.T, c *testkit.Conn) {
	k.Helper()
	unknown := []string{"sh", "shows", "SHOW", "Show", "b", "buyy 1 1", "exi", "exits", "hello", "buy1 1", "sel 1 1"}
	for _, line := range unknown {
		exchange(k, c, line, stockproto.NoSuchCommand)
	}
	invalid := []string{
		"buy", "buy 1", "sell 1", "buy 1 2 3", "sell 1 2 3", // missing, extra
		"buy x 1", "buy 1 x", "sell 1 2x", "buy 1 1.5", // not numbers
		"buy 1 0", "sell 1 0", // zero
		"buy 1 -5", "sell 1 -500", "buy -1 1", "sell -5 1", // negative (the original took sell 1 -500)
		"buy 1 2147483648", "sell 1 99999999999999999999", "buy 99999999999999999999 1", // overflow
		"show 1", "show all", "exit now", // extra arguments
	}
	for _, line := range invalid {
		exchange(k, c, line, stockproto.InvalidArgument)
	}
}

// checkPipelined sends several requests in one write: every one is answered,
// in order, an empty line after a command included (it crashed the original).
func checkPipelined(k *testkit.T, c *testkit.Conn, m *model) {
	k.Helper()
	batches := []string{
		"buy 5 1\n\n",
		"show\nbuy 9 1\n\nsell 9 1\nnope\nbuy 9 0\nshow\n",
		"buy 1 1\r\nsell 1 1\r\n\r\n",
	}
	for _, batch := range batches {
		c.Write([]byte(batch), fmt.Sprintf("%q (in one write)", batch))
		for _, line := range strings.SplitAfter(batch, "\n") {
			if line == "" {
				continue
			}
			expectRecord(k, c, reply(m, strings.TrimRight(line, "\r\n")))
		}
	}
}

// checkSplitLine: a request, then the start of the next one, in one write.
// The first is answered at once: its reply must not wait for the rest of a
// line the client may send only after it has read that reply.
func checkSplitLine(k *testkit.T, c *testkit.Conn, m *model) {
	k.Helper()
	c.Write([]byte("buy 5 1\nsh"), `"buy 5 1\nsh" (in one write; the rest of the line comes after the reply)`)
	got, err := readRecord(c)
	if err != nil {
		k.Fatalf("a whole request followed by half of the next one: %v\n(answer every whole line before "+
			"waiting for more: gather replies only while another whole line is buffered)%s", err, c.Context())
	}
	if want := m.apply(mustParse("buy 5 1")); got != want {
		k.Fatalf("wrong reply\n  want: %q\n   got: %q%s", want, got, c.Context())
	}
	exchange(k, c, "ow", m.apply(mustParse("show")))
}

// checkUnterminated: a last line that ends at end of stream without '\n' is
// not a request (it may be one cut short: "buy 1 100" cut to "buy 1 10"): it
// gets no reply and changes nothing, in chapter 04 and chapter 05 alike. The
// whole lines before it are answered.
func checkUnterminated(k *testkit.T, srv *testkit.Server, m *model) {
	k.Helper()
	c := k.Dial(srv)
	c.Write([]byte("buy 5 1\nsell 5 100"), `"buy 5 1\nsell 5 100" (in one write, then end of stream)`)
	c.CloseWrite()
	expectRecord(k, c, m.apply(mustParse("buy 5 1")))
	text, n, err := readRecordN(c)
	if err == nil || n > 0 {
		k.Fatalf("after a last line without '\\n' and end of stream: want no reply and the connection "+
			"closed, got %d bytes (%q), %v\n(a line that ends at end of stream may be a request cut short: "+
			"it is not run)%s", n, text, err, c.Context())
	}
	exchange(k, k.Dial(srv), "show", m.apply(mustParse("show")))
}

// reply is the answer to any request line, good or bad, updating m.
func reply(m *model, line string) string {
	req, err := stockproto.Parse(line)
	switch {
	case err != nil:
		return stockproto.ReplyOf(err)
	case req.Cmd == stockproto.Empty:
		return stockproto.PleaseType
	}
	return m.apply(req)
}

// checkExit: exit gets no reply and closes that connection only; the
// replies to requests before it still arrive.
func checkExit(k *testkit.T, srv *testkit.Server, m *model) {
	k.Helper()
	a, b := k.Dial(srv), k.Dial(srv)
	exchange(k, b, "show", m.apply(mustParse("show")))
	a.WriteLine("exit")
	a.ExpectClosed()
	exchange(k, b, "buy 5 1", m.apply(mustParse("buy 5 1")))

	c := k.Dial(srv)
	c.Write([]byte("sell 5 1\nshow\nexit\nbuy 5 1\nshow\n"), `"sell 5 1\nshow\nexit\nbuy 5 1\nshow\n" (in one write)`)
	expectRecord(k, c, m.apply(mustParse("sell 5 1")))
	expectRecord(k, c, m.apply(mustParse("show")))
	c.ExpectClosed()
	// Nothing after exit is run: the buy in the same write did not happen.
	exchange(k, b, "show", m.apply(mustParse("show")))

	// A line longer than 8192 bytes is no request of this protocol: the
	// server closes that connection (and only that one).
	long := k.Dial(srv)
	long.Write([]byte(strings.Repeat("x", stockproto.RecordSize+100)+"\n"), "a 8293-byte line")
	long.ExpectClosed()
	exchange(k, b, "show", m.apply(mustParse("show")))
}

// checkLongListing: a market whose listing does not fit in one record is
// answered with as many whole lines as fit, and the record still ends in NUL.
func checkLongListing(k *testkit.T, impl Impl) {
	k.Helper()
	var text strings.Builder
	for i := range 600 {
		id := (i*7919)%600 + 1_000_000 // shuffled, so the tree is not a list
		fmt.Fprintf(&text, "%d %d %d\n", id, 1_000_000+i, 2_000_000+i)
	}
	srv, _, _ := newServer(k, impl, Config{}, text.String())
	all := preOrder(parseStocks(k, text.String()))
	want, fit := stockproto.AppendShow(nil, all)
	c := k.Dial(srv)
	exchange(k, c, "show", string(want))
	if fit == len(all) || fit < 100 {
		k.Fatalf("the suite's long market is not long enough to test this (%d of %d lines fit)", fit, len(all))
	}
	exchange(k, c, "buy 1000000 1", stockproto.BuyOK) // still in step after the long record
}
