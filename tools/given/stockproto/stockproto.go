// Package stockproto is the stock protocol (docs/protocols.md §3) as given
// code: the request parser, the reply texts and the fixed-size reply record.
// Chapter 04 (threads) and chapter 05 (event loop) serve the same protocol
// with different concurrency, so what the bytes mean has one home here and
// the chapters write only how connections are served.
//
// A request is one line, '\n'-terminated: bytes that end at end of stream
// without a '\n' are no request (they may be one cut short) and get no reply,
// in both chapters. A reply is one record of exactly RecordSize bytes: the
// reply text, then NUL bytes. That framing is the original's (CS:APP
// Rio_readnb(MAXLINE)): its clients and benchmark read exactly 8192 bytes per
// request, so a server that keeps it can be driven by them.
package stockproto

import (
	"errors"
	"strings"

	"serverlab/tools/given/stockfile"
)

// RecordSize is the size of every reply.
const RecordSize = 8192

// MaxText is the longest reply text: one byte less than a record, so that
// every record ends in at least one NUL and the original's C clients, which
// print the record as a string, always find its end.
const MaxText = RecordSize - 1

// Reply texts, exactly as the original sends them.
const (
	ShowOK          = "[show]success\n"
	BuyOK           = "[buy]success\n"
	SellOK          = "[sell]success\n"
	NoSuchStock     = "NO SUCH STOCK\n"
	NotEnough       = "NOT ENOUGH LEFT STOCK\n"
	PleaseType      = "Please Type Command\n"
	NoSuchCommand   = "No Such Command\n"
	InvalidArgument = "Invalid Argument\n"
)

// Cmd is a request's command.
type Cmd int

// The commands. Matching is exact and case-sensitive: the original matched
// by prefix ("sh" meant show, "exits" meant exit), which the course does not
// copy.
const (
	Empty Cmd = iota // an empty line (or blanks only)
	Show
	Buy
	Sell
	Exit
)

// Request is one parsed request line.
type Request struct {
	Cmd Cmd
	ID  int // buy, sell
	N   int // buy, sell: always ≥ 1
}

// MaxArg is the largest ID or count a request may carry: the original's C
// int (stockfile.MaxValue, the largest number of the file too). Larger numbers
// are "Invalid Argument", as is anything that is not decimal digits. A stock's
// count may not pass it either: a sell that would is "Invalid Argument" and
// changes nothing (the original's int would have wrapped to a negative count).
const MaxArg = stockfile.MaxValue

// ErrRequest is the error of a request that cannot be served. Its Reply is
// the text to answer with.
type ErrRequest struct{ Reply string }

func (e *ErrRequest) Error() string { return strings.TrimSuffix(e.Reply, "\n") }

var (
	errNoSuchCommand = &ErrRequest{NoSuchCommand}
	errInvalid       = &ErrRequest{InvalidArgument}
)

// Parse parses one request line, given without its '\n'. A trailing '\r' is
// stripped (telnet and Windows clients send CRLF). Tokens are separated by
// runs of spaces or tabs. An unknown command is an *ErrRequest with
// NoSuchCommand; a known one with missing, extra, non-numeric, zero, negative
// or too large arguments is an *ErrRequest with InvalidArgument.
//
// Parse runs once per request on the servers' hot path, so it does not
// allocate: the fields go into an array on the stack, and nothing keeps a
// reference to line (a caller's string(b) conversion can then stay on the
// stack too).
func Parse(line string) (Request, error) {
	buf, n := fields(strings.TrimSuffix(line, "\r"))
	f := buf[:n]
	if len(f) == 0 {
		return Request{Cmd: Empty}, nil
	}
	switch f[0] {
	case "show":
		return noArgs(Show, f)
	case "exit":
		return noArgs(Exit, f)
	case "buy":
		return trade(Buy, f)
	case "sell":
		return trade(Sell, f)
	}
	return Request{}, errNoSuchCommand
}

// maxFields is one more than any request has: a fourth field is enough to
// know that a line has too many.
const maxFields = 4

// fields splits line at runs of spaces and tabs, keeping at most maxFields
// fields: they are f[:n]. (An array returned by value, rather than a slice,
// lets the fields stay on the caller's stack.)
func fields(line string) (f [maxFields]string, n int) {
	for i := 0; i < len(line) && n < maxFields; {
		for i < len(line) && isBlank(line[i]) {
			i++
		}
		start := i
		for i < len(line) && !isBlank(line[i]) {
			i++
		}
		if i > start {
			f[n] = line[start:i]
			n++
		}
	}
	return f, n
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

func noArgs(c Cmd, f []string) (Request, error) {
	if len(f) != 1 {
		return Request{}, errInvalid
	}
	return Request{Cmd: c}, nil
}

func trade(c Cmd, f []string) (Request, error) {
	if len(f) != 3 {
		return Request{}, errInvalid
	}
	id, ok := arg(f[1])
	if !ok {
		return Request{}, errInvalid
	}
	n, ok := arg(f[2])
	if !ok || n < 1 {
		return Request{}, errInvalid
	}
	return Request{Cmd: c, ID: id, N: n}, nil
}

// arg parses a request's number: decimal digits only (no sign), at most
// MaxArg. Unlike stockfile.Number it builds no error message, which would
// make the line escape to the heap.
func arg(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
		if n > MaxArg {
			return 0, false
		}
	}
	return n, true
}

// ReplyOf is the text to answer a failed request with: the Reply of an
// *ErrRequest, or "" if err is not one.
func ReplyOf(err error) string {
	var e *ErrRequest
	if errors.As(err, &e) {
		return e.Reply
	}
	return ""
}

// AppendRecord appends text as one reply record to dst: text, then NULs up to
// RecordSize. A text longer than MaxText is cut.
func AppendRecord(dst []byte, text string) []byte {
	start := len(dst)
	return FinishRecord(append(dst, text...), start)
}

// FinishRecord pads dst with NULs so that dst[start:] is one record: a server
// appends a reply's text to its output buffer, then finishes the record in
// place, without copying the text. A text longer than MaxText is cut.
func FinishRecord(dst []byte, start int) []byte {
	if len(dst)-start > MaxText {
		dst = dst[:start+MaxText]
	}
	return append(dst, make([]byte, RecordSize-(len(dst)-start))...)
}

// AppendShow appends the text of a `show` reply to dst: ShowOK, then one line
// per stock in the given order, as many whole lines as fit in MaxText. The
// original overflowed its buffer here; a listing that does not fit is cut at
// a line boundary, so a client never sees half a line. It reports how many
// stocks fit.
func AppendShow(dst []byte, stocks []stockfile.Stock) ([]byte, int) {
	start := len(dst)
	dst = append(dst, ShowOK...)
	for i, s := range stocks {
		before := len(dst)
		dst = stockfile.AppendLine(dst, s)
		if len(dst)-start > MaxText {
			return dst[:before], i
		}
	}
	return dst, len(stocks)
}
