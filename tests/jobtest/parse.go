package jobtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"serverlab/tests/testkit"
	"serverlab/tools/jobs"
	"serverlab/tools/lab"
)

// The protocol's error messages (docs/protocols.md §2).
const (
	msgInvalidInteger  = "invalid integer"
	msgOutOfRange      = "argument out of range"
	msgMissingArgument = "missing argument"
	msgUnsupported     = "unsupported command"
	msgTooLarge        = "request too large"
	msgShuttingDown    = "server shutting down"
)

// parseCase is one line and what Parse must make of it: a request, or the
// error message.
type parseCase struct {
	line string
	want Request
	err  string
}

var parseCases = []parseCase{
	{line: "PRIME 7", want: Request{Command: "PRIME", N: 7}},
	{line: "PRIME 1", want: Request{Command: "PRIME", N: 1}},
	{line: "PRIME 18446744073709551615", want: Request{Command: "PRIME", N: 1<<64 - 1}},
	{line: "PRIME 0007", want: Request{Command: "PRIME", N: 7}},
	{line: "SORT 1", want: Request{Command: "SORT", N: 1}},
	{line: "SORT 2000000", want: Request{Command: "SORT", N: jobs.MaxSort}},
	{line: "MATMUL 1", want: Request{Command: "MATMUL", N: 1}},
	{line: "MATMUL 512", want: Request{Command: "MATMUL", N: jobs.MaxMatMul}},
	{line: "HASH hello world", want: Request{Command: "HASH", Text: "hello world"}},
	{line: "HASH x y  z", want: Request{Command: "HASH", Text: "x y  z"}},
	{line: "HASH  leading space", want: Request{Command: "HASH", Text: " leading space"}},
	{line: "HASH trailing ", want: Request{Command: "HASH", Text: "trailing "}},
	{line: "HASH 42", want: Request{Command: "HASH", Text: "42"}},

	{line: "PRIME -5", err: msgInvalidInteger},
	{line: "PRIME +5", err: msgInvalidInteger},
	{line: "PRIME 1x", err: msgInvalidInteger},
	{line: "PRIME 5 ", err: msgInvalidInteger},
	{line: "PRIME  5", err: msgInvalidInteger},
	{line: "PRIME 0x10", err: msgInvalidInteger},
	{line: "SORT 1.5", err: msgInvalidInteger},
	{line: "MATMUL ten", err: msgInvalidInteger},
	{line: "PRIME 5\t", err: msgInvalidInteger},

	{line: "PRIME 0", err: msgOutOfRange},
	{line: "PRIME 18446744073709551616", err: msgOutOfRange},
	{line: "PRIME 99999999999999999999999999", err: msgOutOfRange},
	{line: "SORT 0", err: msgOutOfRange},
	{line: "SORT 2000001", err: msgOutOfRange},
	{line: "SORT 18446744073709551615", err: msgOutOfRange},
	{line: "MATMUL 0", err: msgOutOfRange},
	{line: "MATMUL 513", err: msgOutOfRange},

	{line: "PRIME", err: msgMissingArgument},
	{line: "SORT", err: msgMissingArgument},
	{line: "MATMUL", err: msgMissingArgument},
	{line: "HASH", err: msgMissingArgument},

	{line: "", err: msgUnsupported},
	{line: "FOO 1", err: msgUnsupported},
	{line: "FOO", err: msgUnsupported},
	{line: "prime 7", err: msgUnsupported},
	{line: "Prime 7", err: msgUnsupported},
	{line: "PRIMES 7", err: msgUnsupported},
	{line: " PRIME 7", err: msgUnsupported},
	{line: "PRIME\t7", err: msgUnsupported},
}

// Parse checks exercise 3.1: request parsing and validation, and the line
// reader that frames requests.
func Parse(t *testing.T, impl Impl) {
	k := testkit.New(t, "3.1")
	for _, c := range parseCases {
		got, err := impl.Parse([]byte(c.line))
		if errors.Is(err, lab.ErrNotImplemented) {
			k.Fatalf("Parse(%q): %v", c.line, err)
		}
		switch {
		case c.err != "" && err == nil:
			k.Errorf("Parse(%q)\n  want error: %q\n         got: %+v, no error", c.line, c.err, got)
		case c.err != "" && err.Error() != c.err:
			k.Errorf("Parse(%q)\n  want error: %q\n   got error: %q (the text is the protocol's message)", c.line, c.err, err)
		case c.err == "" && err != nil:
			k.Errorf("Parse(%q)\n  want: %+v\n   got error: %q", c.line, c.want, err)
		case c.err == "" && got != c.want:
			k.Errorf("Parse(%q)\n  want: %+v\n   got: %+v", c.line, c.want, got)
		}
	}
	checkParseCopies(k, impl)
	checkLineReader(k, impl)
	checkLineReaderMemory(k, impl)
}

// checkParseCopies: a HASH request must not share the line's bytes, which the
// reader reuses for the next line.
func checkParseCopies(k *testkit.T, impl Impl) {
	k.Helper()
	line := []byte("HASH original")
	got, err := impl.Parse(line)
	if err != nil {
		k.Fatalf("Parse(%q): %v", line, err)
	}
	copy(line, "XXXXXXXXXXXXX")
	if got.Text != "original" {
		k.Fatalf("Parse(\"HASH original\") returned Text %q after the caller reused its line buffer: "+
			"copy the text (string(arg)), the reader overwrites its buffer with the next line", got.Text)
	}
}

// lineResult is one result of a line reader's next: a line or an error text.
type lineResult struct {
	line string
	err  string
}

func (r lineResult) String() string {
	if r.err != "" {
		return "error " + r.err
	}
	return fmt.Sprintf("line %q", r.line)
}

// readLines calls next until it fails with something other than ErrTooLarge,
// at most max times.
func readLines(next func() ([]byte, error), max int) []lineResult {
	var out []lineResult
	for range max {
		line, err := next()
		switch {
		case err == nil:
			out = append(out, lineResult{line: string(line)})
		case err.Error() == msgTooLarge:
			out = append(out, lineResult{err: msgTooLarge})
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return append(out, lineResult{err: "EOF"})
		default:
			return append(out, lineResult{err: err.Error()})
		}
	}
	return out
}

func checkLineReader(k *testkit.T, impl Impl) {
	k.Helper()
	exact := "HASH " + strings.Repeat("a", jobs.MaxLine-5)
	over := exact + "b"
	cases := []struct {
		what  string
		input string
		want  []lineResult
	}{
		{"lines ending in \\n and \\r\\n; only one \\r is stripped",
			"PRIME 7\nSORT 5\r\nHASH a\r\r\n\nMATMUL 2\n",
			[]lineResult{{line: "PRIME 7"}, {line: "SORT 5"}, {line: "HASH a\r"}, {line: ""}, {line: "MATMUL 2"}, {err: "EOF"}}},
		{"an unterminated last line is not a request",
			"PRIME 7\nPRIME 11",
			[]lineResult{{line: "PRIME 7"}, {err: "EOF"}}},
		{fmt.Sprintf("a line of exactly %d bytes, then one of %d", jobs.MaxLine, jobs.MaxLine+1),
			exact + "\n" + over + "\nPRIME 7\n",
			[]lineResult{{line: exact}, {err: msgTooLarge}, {line: "PRIME 7"}, {err: "EOF"}}},
		{fmt.Sprintf("a line of exactly %d bytes ending in \\r\\n", jobs.MaxLine),
			exact + "\r\nPRIME 7\r\n",
			[]lineResult{{line: exact}, {line: "PRIME 7"}, {err: "EOF"}}},
		{"a 20000-byte line between two requests",
			"PRIME 3\n" + strings.Repeat("x", 20000) + "\nPRIME 7\n",
			[]lineResult{{line: "PRIME 3"}, {err: msgTooLarge}, {line: "PRIME 7"}, {err: "EOF"}}},
		{"two long lines in a row",
			strings.Repeat("x", 5000) + "\n" + strings.Repeat("y", 9000) + "\r\nHASH z\n",
			[]lineResult{{err: msgTooLarge}, {err: msgTooLarge}, {line: "HASH z"}, {err: "EOF"}}},
	}
	for _, c := range cases {
		for _, slow := range []bool{false, true} {
			var r io.Reader = strings.NewReader(c.input)
			how := "in one piece"
			if slow {
				r, how = iotest.OneByteReader(r), "one byte per Read"
			}
			got := readLines(impl.NewLineReader(r), len(c.want)+2)
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				k.Fatalf("line reader on %s (%s)\n  input: %s\n   want: %v\n    got: %v",
					c.what, how, abbreviate(c.input), c.want, got)
			}
		}
	}
}

// checkLineReaderMemory: a client sending a 32 MB line must not make the
// server hold it; the reader's buffer is bounded.
func checkLineReaderMemory(k *testkit.T, impl Impl) {
	k.Helper()
	const size = 32 << 20
	r := io.MultiReader(&repeatReader{b: 'x', n: size}, strings.NewReader("\nPRIME 7\n"))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got := readLines(impl.NewLineReader(r), 4)
	runtime.ReadMemStats(&after)
	want := []lineResult{{err: msgTooLarge}, {line: "PRIME 7"}, {err: "EOF"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		k.Fatalf("line reader on a %d-byte line then \"PRIME 7\\n\"\n  want: %v\n   got: %v", size, want, got)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		k.Fatalf("reading a %d-byte line allocated %d bytes: the reader must discard a long line as it goes, "+
			"in a fixed buffer (bufio.Reader.ReadSlice and bufio.ErrBufferFull), not collect it", size, alloc)
	}
}

// repeatReader yields n copies of b without holding them.
type repeatReader struct {
	b byte
	n int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	p = p[:min(len(p), r.n)]
	for i := range p {
		p[i] = r.b
	}
	r.n -= len(p)
	return len(p), nil
}

// abbreviate shortens long inputs for messages.
func abbreviate(s string) string {
	var b bytes.Buffer
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] == s[0] {
			i++
		}
		if i > 16 {
			fmt.Fprintf(&b, "[%d × %q]", i, s[0])
		} else {
			fmt.Fprintf(&b, "%s", strings.Trim(fmt.Sprintf("%q", s[:i]), `"`))
		}
		s = s[i:]
	}
	return b.String()
}
