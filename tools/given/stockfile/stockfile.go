// Package stockfile reads and writes stock.txt, the store of the stock
// servers (docs/protocols.md §3): one stock per line,
//
//	<ID> <COUNT> <PRICE>
//
// with non-negative decimal integers (at most MaxValue, the original's C int)
// separated by spaces or tabs. Chapter 04 (threads) and chapter 05 (event
// loop) both load it at start and write it back while they run, so the format
// and the atomic write have one home here. It is given code: chapters import
// it, they never copy it.
package stockfile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Stock is one line of stock.txt.
type Stock struct {
	ID    int
	Count int
	Price int
}

// ErrInvalid is wrapped by every error about the file's content.
var ErrInvalid = errors.New("invalid stock file")

// LineError says which line of stock.txt is wrong and why. A server refuses
// to start on a malformed file: better than serving a market with stocks
// silently missing.
type LineError struct {
	Line int    // 1-based
	Text string // the line as read, without its '\n'
	Err  error  // what is wrong
}

func (e *LineError) Error() string {
	return fmt.Sprintf("line %d %q: %v", e.Line, e.Text, e.Err)
}

func (e *LineError) Unwrap() []error { return []error{ErrInvalid, e.Err} }

// Line is s as one line of stock.txt, '\n' included.
func (s Stock) Line() string { return string(AppendLine(nil, s)) }

// AppendLine appends s as one line of stock.txt ('\n' included) to b. It does
// not allocate when b has room, which matters to a `show` answered thousands
// of times a second.
func AppendLine(b []byte, s Stock) []byte {
	b = strconv.AppendInt(b, int64(s.ID), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(s.Count), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(s.Price), 10)
	return append(b, '\n')
}

// Format is the whole file for stocks, one line each, in the given order.
func Format(stocks []Stock) []byte {
	var b []byte
	for _, s := range stocks {
		b = AppendLine(b, s)
	}
	return b
}

// ParseLine parses one line (without its '\n'): three non-negative decimal
// integers separated by spaces or tabs. A trailing '\r' is ignored, so a file
// edited on Windows still loads.
func ParseLine(line string) (Stock, error) {
	f := strings.FieldsFunc(strings.TrimSuffix(line, "\r"), func(r rune) bool { return r == ' ' || r == '\t' })
	if len(f) != 3 {
		return Stock{}, fmt.Errorf("want 3 fields (id count price), got %d", len(f))
	}
	var v [3]int
	for i, name := range []string{"id", "count", "price"} {
		n, err := Number(f[i])
		if err != nil {
			return Stock{}, fmt.Errorf("%s: %w", name, err)
		}
		v[i] = n
	}
	return Stock{ID: v[0], Count: v[1], Price: v[2]}, nil
}

// MaxValue is the largest ID, count or price: the original's C int. A count
// that grew past it (one sell too many) would be a negative number in the
// original, so the servers refuse the trade that would pass it, and a file
// holding a larger number is malformed: both sides of the wire agree on one
// range.
const MaxValue = 1<<31 - 1

// Number parses a non-negative decimal integer: digits only (no sign, no
// spaces) and no larger than MaxValue. The request parser of package
// stockproto uses the same rule, so a file and a request agree on what a
// number is.
func Number(s string) (int, error) {
	if s == "" {
		return 0, errors.New("empty number")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("%q is not a non-negative decimal integer", s)
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > MaxValue {
		return 0, fmt.Errorf("%q is out of range (at most %d)", s, MaxValue)
	}
	return n, nil
}

// Parse reads a whole stock file. Empty lines (and lines of blanks only) are
// skipped; any other malformed line, or a second line with an ID seen
// before, is a *LineError naming the line. The stocks are returned in file
// order: the servers insert them in that order, which fixes the tree's shape.
func Parse(r io.Reader) ([]Stock, error) {
	var stocks []Stock
	seen := map[int]int{} // id → line
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		if strings.TrimSpace(text) == "" {
			continue
		}
		s, err := ParseLine(text)
		if err != nil {
			return nil, &LineError{Line: n, Text: text, Err: err}
		}
		if first, dup := seen[s.ID]; dup {
			return nil, &LineError{Line: n, Text: text, Err: fmt.Errorf("stock %d is already on line %d", s.ID, first)}
		}
		seen[s.ID] = n
		stocks = append(stocks, s)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return stocks, nil
}

// Read parses the stock file at path. A missing file is an error that says
// so: the servers refuse to start without one.
func Read(path string) ([]Stock, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("stock file %s does not exist (a server needs one to start): %w", path, err)
	}
	if err != nil {
		return nil, err
	}
	stocks, err := Parse(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return stocks, nil
}
