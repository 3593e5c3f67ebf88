package stockproto

import (
	"bytes"
	"strings"
	"testing"

	"serverlab/tools/stockfile"
)

func TestParse(t *testing.T) {
	ok := map[string]Request{
		"show": {Cmd: Show}, "show\r": {Cmd: Show}, " \tshow ": {Cmd: Show}, "exit": {Cmd: Exit},
		"": {Cmd: Empty}, "\r": {Cmd: Empty}, "   ": {Cmd: Empty},
		"buy 1 2": {Cmd: Buy, ID: 1, N: 2}, "sell\t0\t2147483647": {Cmd: Sell, ID: 0, N: MaxArg},
	}
	for line, want := range ok {
		if got, err := Parse(line); err != nil || got != want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", line, got, err, want)
		}
	}
	bad := map[string]string{
		"sh": NoSuchCommand, "Show": NoSuchCommand, "exits": NoSuchCommand, "buy1 2": NoSuchCommand,
		"buy": InvalidArgument, "buy 1": InvalidArgument, "buy 1 2 3": InvalidArgument, "buy 1 0": InvalidArgument,
		"sell 1 -500": InvalidArgument, "buy -1 1": InvalidArgument, "buy 1 +2": InvalidArgument,
		"buy 1 2147483648": InvalidArgument, "buy 2147483648 1": InvalidArgument, "show 1": InvalidArgument,
		"exit now": InvalidArgument, "buy 1 2x": InvalidArgument,
	}
	for line, want := range bad {
		if _, err := Parse(line); ReplyOf(err) != want {
			t.Errorf("Parse(%q): error %v; want reply %q", line, err, want)
		}
	}
}

func TestRecords(t *testing.T) {
	rec := AppendRecord([]byte("x"), BuyOK)
	if len(rec) != 1+RecordSize || !bytes.HasPrefix(rec[1:], []byte(BuyOK)) ||
		bytes.Count(rec[1+len(BuyOK):], []byte{0}) != RecordSize-len(BuyOK) {
		t.Errorf("AppendRecord: %d bytes, want 1 + %d: text then NULs", len(rec), RecordSize)
	}
	long := AppendRecord(nil, strings.Repeat("a", 2*RecordSize))
	if len(long) != RecordSize || long[RecordSize-1] != 0 {
		t.Errorf("AppendRecord of a long text: %d bytes, last %q; want %d ending in NUL", len(long), long[len(long)-1], RecordSize)
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
	if string(text) != want || len(text) > MaxText || len(text)+len(next) <= MaxText || fit == 0 {
		t.Errorf("AppendShow of 1000 stocks: %d bytes with %d lines; want the most whole lines within %d bytes",
			len(text), fit, MaxText)
	}
	small, n := AppendShow(nil, stocks[:2])
	if n != 2 || string(small) != ShowOK+"0 1000000 7\n1 1000001 7\n" {
		t.Errorf("AppendShow of 2 stocks = %q, %d", small, n)
	}
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
	if allocs != 0 {
		t.Errorf("Parse(string(%q)): %.1f allocations per call, want 0", line, allocs)
	}
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
