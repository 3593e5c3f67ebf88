package jobtest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/iotest"

	"serverlab/tools/given/jobs"
	"serverlab/tools/given/lab"
)

// FuzzParse is the fuzz target of exercise 3.1's parser: on any line, Parse
// agrees with the protocol's reference rule, jobs.Reference, and never
// panics. A chapter wires it in with
//
//	func FuzzParse(f *testing.F) { jobtest.FuzzParse(f, impl) }
//
// and runs it with go test -fuzz FuzzParse. It skips while Parse is a stub.
func FuzzParse(f *testing.F, impl Impl) {
	for _, c := range parseCases {
		f.Add([]byte(c.line))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.IndexByte(line, '\n') >= 0 {
			return // a line has no '\n'
		}
		got, err := impl.Parse(line)
		if errors.Is(err, lab.ErrNotImplemented) {
			t.Skip("Parse is not implemented yet (exercise 3.1)")
		}
		cmd, n, text, msg := jobs.Reference(string(line))
		want := Request{Command: cmd, N: n, Text: text}
		switch {
		case msg != "" && (err == nil || err.Error() != msg):
			t.Fatalf("Parse(%q) = %+v, %v; want error %q", line, got, err, msg)
		case msg == "" && (err != nil || got != want):
			t.Fatalf("Parse(%q) = %+v, %v; want %+v", line, got, err, want)
		}
	})
}

// FuzzLineReader is the fuzz target of exercise 3.1's line reader: on any
// stream, read in one piece or one byte at a time, it returns the lines that
// referenceLines finds, and never panics.
func FuzzLineReader(f *testing.F, impl Impl) {
	f.Add([]byte("PRIME 7\nSORT 5\r\nHASH a\r\r\n\n"))
	f.Add([]byte("PRIME 7\nPRIME 11"))
	f.Add([]byte(strings.Repeat("x", jobs.MaxLine) + "\n" + strings.Repeat("y", jobs.MaxLine+1)))
	f.Fuzz(func(t *testing.T, stream []byte) {
		want := referenceLines(stream)
		for _, slow := range []bool{false, true} {
			var r = bytes.NewReader(stream)
			next := impl.NewLineReader(r)
			if slow {
				next = impl.NewLineReader(iotest.OneByteReader(r))
			}
			if _, err := impl.NewLineReader(bytes.NewReader(nil))(); errors.Is(err, lab.ErrNotImplemented) {
				t.Skip("the line reader is not implemented yet (exercise 3.1)")
			}
			if got := readLines(next, len(want)+2); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("line reader on %s (one byte per Read: %v)\n  want: %v\n   got: %v", abbreviate(string(stream)), slow, want, got)
			}
		}
	})
}

// referenceLines is the line rule written plainly: lines end at '\n', one
// '\r' before it is stripped; more than jobs.MaxLine bytes before a '\n' is
// "request too large" and the end; an unterminated last line is dropped.
func referenceLines(stream []byte) []lineResult {
	var out []lineResult
	for {
		i := bytes.IndexByte(stream, '\n')
		switch {
		case i > jobs.MaxLine || (i < 0 && len(stream) > jobs.MaxLine):
			return append(out, lineResult{err: msgTooLarge})
		case i < 0:
			return append(out, lineResult{err: "EOF"})
		}
		out = append(out, lineResult{line: string(bytes.TrimSuffix(stream[:i], []byte("\r")))})
		stream = stream[i+1:]
	}
}
