package jobtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"serverlab/tests/judge"
	"serverlab/tests/testkit"
	"serverlab/tools/given/jobs"
	"serverlab/tools/given/lab"
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
	{line: " \t", err: msgUnsupported},

	// The original reads the command with `in >> cmd` (docs/protocols.md §2):
	// white space before it is skipped, and it ends at any white space; the
	// argument is the rest, less one space.
	{line: "  PRIME 7", want: Request{Command: "PRIME", N: 7}},
	{line: "\tPRIME 7", want: Request{Command: "PRIME", N: 7}},
	{line: "\vPRIME 7", want: Request{Command: "PRIME", N: 7}},
	{line: "\fPRIME 7", want: Request{Command: "PRIME", N: 7}},
	{line: "\rPRIME 7", want: Request{Command: "PRIME", N: 7}},
	{line: "PRIME\t7", err: msgInvalidInteger},
	{line: "PRIME\v7", err: msgInvalidInteger},
	{line: "PRIME\t", err: msgInvalidInteger},
	{line: "HASH\thello", want: Request{Command: "HASH", Text: "\thello"}},
	{line: " HASH  x ", want: Request{Command: "HASH", Text: " x "}},
	{line: "PRIME ", err: msgMissingArgument},
	{line: "HASH ", err: msgMissingArgument},
	{line: "\tSORT ", err: msgMissingArgument},
	// std::from_chars: a run of digits too large is out of range, whatever
	// follows it.
	{line: "PRIME 99999999999999999999x", err: msgOutOfRange},
	{line: "SORT 18446744073709551616 ", err: msgOutOfRange},
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
	k.Run("seeded-lines", func(t *testing.T) { checkParseSeeded(testkit.New(t, k.Exercise()), impl) })
	k.Run("line-reader", func(t *testing.T) { checkLineReader(testkit.New(t, k.Exercise()), impl) })
	k.Run("line-reader-memory", func(t *testing.T) { checkLineReaderMemory(testkit.New(t, k.Exercise()), impl) })
}

// checkParseSeeded compares Parse with the protocol's reference rule
// (jobs.Reference) on lines drawn afresh each run from the pieces that
// matter: white space of every kind, the commands and near misses, numbers
// at and around their limits, junk.
func checkParseSeeded(k *testkit.T, impl Impl) {
	k.Helper()
	rng := k.Rand()
	for range 3000 {
		line := randomLine(rng)
		got, err := impl.Parse([]byte(line))
		cmd, n, text, msg := jobs.Reference(line)
		switch {
		case msg != "" && (err == nil || err.Error() != msg):
			k.Fatalf("Parse(%q)\n  want error: %q\n         got: %+v, %v", line, msg, got, err)
		case msg == "" && err != nil:
			k.Fatalf("Parse(%q)\n  want: %+v\n   got error: %q", line, Request{cmd, n, text}, err)
		case msg == "" && got != (Request{cmd, n, text}):
			k.Fatalf("Parse(%q)\n  want: %+v\n   got: %+v", line, Request{cmd, n, text}, got)
		}
	}
}

// randomLine joins 1–4 random pieces of request lines.
func randomLine(rng *rand.Rand) string {
	pieces := []func() string{
		func() string {
			return []string{"PRIME", "SORT", "MATMUL", "HASH", "prime", "PRIM", "HASHX", "X"}[rng.IntN(8)]
		},
		func() string { return []string{" ", "  ", "\t", "\v", "\f", "\r", "\x00", "\u00a0"}[rng.IntN(8)] },
		func() string { return strconv.FormatUint(rng.Uint64(), 10) },
		func() string { return strconv.FormatUint(rng.Uint64N(600), 10) },
		func() string {
			return []string{"0", "1", "512", "513", "2000000", "2000001", "18446744073709551615",
				"18446744073709551616", "99999999999999999999999", "-5", "+5", "007"}[rng.IntN(12)]
		},
		func() string { return []string{"x", "1x", "hello", ".", "é"}[rng.IntN(5)] },
	}
	var b strings.Builder
	for range 1 + rng.IntN(4) {
		b.WriteString(pieces[rng.IntN(len(pieces))]())
	}
	return b.String()
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

// readLines calls next until it fails, at most max times.
func readLines(next func() ([]byte, error), max int) []lineResult {
	var out []lineResult
	for range max {
		line, err := next()
		switch {
		case err == nil:
			out = append(out, lineResult{line: string(line)})
		case err.Error() == msgTooLarge:
			return append(out, lineResult{err: msgTooLarge})
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return append(out, lineResult{err: "EOF"})
		default:
			return append(out, lineResult{err: err.Error()})
		}
	}
	return out
}

// checkLineReader: lines are at most jobs.MaxLine bytes before their '\n'
// (a '\r' included, as in the original); as soon as more have arrived
// without a '\n' the reader reports ErrTooLarge, without reading the rest,
// and keeps reporting it.
func checkLineReader(k *testkit.T, impl Impl) {
	k.Helper()
	exact := "HASH " + strings.Repeat("a", jobs.MaxLine-5)
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
			exact + "\n" + exact + "b\nPRIME 7\n",
			[]lineResult{{line: exact}, {err: msgTooLarge}}},
		{fmt.Sprintf("a line of %d bytes and a \\r (the \\r counts, as in the original)", jobs.MaxLine),
			exact + "\r\nPRIME 7\r\n",
			[]lineResult{{err: msgTooLarge}}},
		{fmt.Sprintf("a line of %d bytes with its \\r", jobs.MaxLine),
			exact[1:] + "\r\nPRIME 7\r\n",
			[]lineResult{{line: exact[1:]}, {line: "PRIME 7"}, {err: "EOF"}}},
		{"a 20000-byte line between two requests: too large, and nothing after it",
			"PRIME 3\n" + strings.Repeat("x", 20000) + "\nPRIME 7\n",
			[]lineResult{{line: "PRIME 3"}, {err: msgTooLarge}}},
		{fmt.Sprintf("%d bytes and no newline yet: too large at once", jobs.MaxLine+1),
			strings.Repeat("y", jobs.MaxLine+1),
			[]lineResult{{err: msgTooLarge}}},
		{fmt.Sprintf("%d bytes and no newline: the end of the stream", jobs.MaxLine),
			strings.Repeat("y", jobs.MaxLine),
			[]lineResult{{err: "EOF"}}},
	}
	for _, c := range cases {
		for _, slow := range []bool{false, true} {
			var r io.Reader = strings.NewReader(c.input)
			how := "in one piece"
			if slow { // judge.DataReader: not one round trip to the judge per byte under the grader
				r, how = judge.DataReader([]byte(c.input), judge.OneByteReads), "one byte per Read"
			}
			next := impl.NewLineReader(r)
			got := readLines(next, len(c.want)+2)
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				k.Fatalf("line reader on %s (%s)\n  input: %s\n   want: %v\n    got: %v",
					c.what, how, abbreviate(c.input), c.want, got)
			}
			if got[len(got)-1].err == msgTooLarge {
				if _, err := next(); err == nil || err.Error() != msgTooLarge {
					k.Fatalf("line reader on %s (%s): after ErrTooLarge the next call returned %v, want ErrTooLarge "+
						"again: the rest of a too-large line cannot be told from the next request", c.what, how, err)
				}
			}
		}
	}
}

// checkLineReaderMemory: a client sending a 32 MB line must not make the
// server hold it, nor even read it: the reader's buffer is bounded, and it
// gives up as soon as the line is known to be too large.
func checkLineReaderMemory(k *testkit.T, impl Impl) {
	k.Helper()
	const size = 32 << 20
	src := &repeatReader{b: 'x', n: size}
	r := io.MultiReader(src, strings.NewReader("\nPRIME 7\n"))
	var before, after runtime.MemStats
	testkit.ReadMemStats(&before)
	got := readLines(impl.NewLineReader(r), 4)
	testkit.ReadMemStats(&after)
	want := []lineResult{{err: msgTooLarge}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		k.Fatalf("line reader on a %d-byte line then \"PRIME 7\\n\"\n  want: %v\n   got: %v", size, want, got)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		k.Fatalf("reading a %d-byte line allocated %d bytes: the reader must keep lines in a fixed buffer "+
			"(bufio.Reader.ReadSlice and bufio.ErrBufferFull), not collect them", size, alloc)
	}
	if read := size - src.n; read > 64<<10 {
		k.Fatalf("to find that a %d-byte line is too large the reader read %d bytes of it; %d are enough: "+
			"answer at once, the server then closes the connection", size, read, jobs.MaxLine+1)
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
