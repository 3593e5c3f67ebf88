package stockproto

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"serverlab/tools/given/stockfile"
)

func TestParse(t *testing.T) {
	ok := map[string]Request{
		"show": {Cmd: Show}, "show\r": {Cmd: Show}, " \tshow ": {Cmd: Show}, "exit": {Cmd: Exit},
		"": {Cmd: Empty}, "\r": {Cmd: Empty}, "   ": {Cmd: Empty},
		"buy 1 2": {Cmd: Buy, ID: 1, N: 2}, "sell\t0\t2147483647": {Cmd: Sell, ID: 0, N: MaxArg},
	}
	for line, want := range ok {
		got, err := Parse(line)
		assert.NoError(t, err, "Parse(%q)", line)
		assert.Equal(t, want, got, "Parse(%q)", line)
	}
	bad := map[string]string{
		"sh": NoSuchCommand, "Show": NoSuchCommand, "exits": NoSuchCommand, "buy1 2": NoSuchCommand,
		"buy": InvalidArgument, "buy 1": InvalidArgument, "buy 1 2 3": InvalidArgument, "buy 1 0": InvalidArgument,
		"sell 1 -500": InvalidArgument, "buy -1 1": InvalidArgument, "buy 1 +2": InvalidArgument,
		"buy 1 2147483648": InvalidArgument, "buy 2147483648 1": InvalidArgument, "show 1": InvalidArgument,
		"exit now": InvalidArgument, "buy 1 2x": InvalidArgument,
	}
	for line, want := range bad {
		_, err := Parse(line)
		assert.Equal(t, want, ReplyOf(err), "Parse(%q): the reply for error %v", line, err)
	}
}

func TestRecords(t *testing.T) {
	rec := AppendRecord([]byte("x"), BuyOK)
	want := append([]byte("x"+BuyOK), make([]byte, RecordSize-len(BuyOK))...)
	assert.Equal(t, want, rec, "AppendRecord: the prefix, then the text padded with NULs to %d bytes", RecordSize)
	long := AppendRecord(nil, strings.Repeat("a", 2*RecordSize))
	if assert.Len(t, long, RecordSize, "AppendRecord of a long text") {
		assert.Zero(t, long[RecordSize-1], "AppendRecord of a long text must end in NUL")
	}
}

func TestAppendShowKeepsWholeLines(t *testing.T) {
	var stocks []stockfile.Stock
	for i := range 1000 {
		stocks = append(stocks, stockfile.Stock{ID: i, Count: 1_000_000 + i, Price: 7})
	}
	text, fit := AppendShow(nil, stocks)
	want := ShowOK + string(stockfile.Format(stocks[:fit]))
	next := stockfile.AppendLine(nil, stocks[fit])
	// The most whole lines within MaxText bytes.
	assert.NotZero(t, fit, "AppendShow of 1000 stocks: lines")
	assert.Equal(t, want, string(text), "AppendShow of 1000 stocks: whole lines")
	assert.LessOrEqual(t, len(text), MaxText, "AppendShow of 1000 stocks: bytes")
	assert.Greater(t, len(text)+len(next), MaxText, "AppendShow of 1000 stocks: the next line would have fitted too")
	small, n := AppendShow(nil, stocks[:2])
	assert.Equal(t, 2, n, "AppendShow of 2 stocks: lines")
	assert.Equal(t, ShowOK+"0 1000000 7\n1 1000001 7\n", string(small), "AppendShow of 2 stocks")
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"show", "buy 1 2", "sell 3 4\r", "", "exit", "buy 99999999999999999999 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		req, err := Parse(line)
		if err != nil {
			if ReplyOf(err) == "" {
				t.Fatalf("Parse(%q): error %v has no reply", line, err)
			}
			return
		}
		if (req.Cmd == Buy || req.Cmd == Sell) && (req.N < 1 || req.N > MaxArg || req.ID < 0 || req.ID > MaxArg) {
			t.Fatalf("Parse(%q) = %+v: arguments out of range", line, req)
		}
	})
}

// TestParseDoesNotAllocate guards the servers' hot path: Parse runs once per
// request (a count of allocations, not a timing, so it is stable).
func TestParseDoesNotAllocate(t *testing.T) {
	line := []byte("buy 7 3")
	allocs := testing.AllocsPerRun(100, func() {
		if req, err := Parse(string(line)); err != nil || req.Cmd != Buy {
			t.Fatalf("Parse(%q) = %+v, %v", line, req, err)
		}
	})
	assert.Zero(t, allocs, "Parse(string(%q)): allocations per call", line)
}

// referenceParse is the obvious Parse (strings.FieldsFunc, strconv.Atoi);
// the fuzz test checks that the allocation-free one agrees with it.
func referenceParse(line string) (Request, string) {
	f := strings.FieldsFunc(strings.TrimSuffix(line, "\r"), func(r rune) bool { return r == ' ' || r == '\t' })
	if len(f) == 0 {
		return Request{Cmd: Empty}, ""
	}
	cmds := map[string]Cmd{"show": Show, "exit": Exit, "buy": Buy, "sell": Sell}
	c, ok := cmds[f[0]]
	switch {
	case !ok:
		return Request{}, NoSuchCommand
	case c == Show || c == Exit:
		if len(f) != 1 {
			return Request{}, InvalidArgument
		}
		return Request{Cmd: c}, ""
	case len(f) != 3:
		return Request{}, InvalidArgument
	}
	id, err1 := stockfile.Number(f[1])
	n, err2 := stockfile.Number(f[2])
	if err1 != nil || err2 != nil || id > MaxArg || n < 1 || n > MaxArg {
		return Request{}, InvalidArgument
	}
	return Request{Cmd: c, ID: id, N: n}, ""
}

func FuzzParseAgreesWithReference(f *testing.F) {
	for _, s := range []string{"show", "buy 1 2", "sell 3 4\r", "", "exit", "buy 99999999999999999999 1", "buy\t1  2 ", "sell 1 -5", "a b c d e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		got, err := Parse(line)
		want, wantReply := referenceParse(line)
		if got != want || ReplyOf(err) != wantReply {
			t.Fatalf("Parse(%q) = %+v, reply %q; reference: %+v, reply %q", line, got, ReplyOf(err), want, wantReply)
		}
	})
}
