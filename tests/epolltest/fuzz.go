//go:build linux

package epolltest

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"serverlab/tests/testkit"
	"serverlab/tools/given/lab"
	"serverlab/tools/given/wire"
)

// FuzzDrainFrames is the fuzz target of exercise 5.1: on any buffer,
// DrainFrames hands over exactly the frames that the given decoder,
// wire.Decode, finds at its front, reports the bytes they take, fails exactly
// when the decoder does, and never panics. A chapter wires it in with
//
//	func FuzzDrainFrames(f *testing.F) { epolltest.FuzzDrainFrames(f, impl) }
func FuzzDrainFrames(f *testing.F, impl Impl) {
	good := testkit.Encode(wire.Frame{Type: wire.Broadcast, Sender: "alice", Payload: []byte("hi")})
	f.Add(good)
	f.Add(append(append([]byte(nil), good...), good[:40]...))
	f.Add(append(append([]byte(nil), good...), testkit.RawHeader(3, -1, []byte("alice"), nil)...))
	f.Fuzz(func(t *testing.T, in []byte) {
		var got []string
		used, err := impl.DrainFrames(in, func(fr wire.Frame) bool { got = append(got, fr.String()); return true })
		if errors.Is(err, lab.ErrNotImplemented) {
			t.Skip("DrainFrames is not implemented yet (exercise 5.1)")
		}
		var want []string
		wantUsed, wantErr := 0, error(nil)
		for {
			fr, n, err := wire.Decode(in[wantUsed:])
			if err != nil || n == 0 {
				wantErr = err
				break
			}
			want = append(want, fr.String())
			wantUsed += n
		}
		if fmt.Sprint(got) != fmt.Sprint(want) || used != wantUsed || (err == nil) != (wantErr == nil) {
			t.Fatalf("DrainFrames(%.200q)\n  want %d frames, %d bytes used, error %v\n   got %d frames, %d bytes used, error %v",
				in, len(want), wantUsed, wantErr, len(got), used, err)
		}
	})
}

// FuzzDrainLines is the fuzz target of exercise 5.2: on any buffer,
// DrainLines agrees with referenceLines, and never panics.
func FuzzDrainLines(f *testing.F, impl Impl) {
	f.Add([]byte("show\n\nbuy 1 2\nsell 3 4\r\nexit\n  \t\nshow\nbuy 5"))
	f.Add([]byte("buy 1 1\r\r\n"))
	f.Add(append(bytes.Repeat([]byte("z"), MaxLine-1), '\n'))
	f.Fuzz(func(t *testing.T, in []byte) {
		var got []string
		used, err := impl.DrainLines(in, func(line []byte) bool { got = append(got, string(line)); return true })
		if errors.Is(err, lab.ErrNotImplemented) {
			t.Skip("DrainLines is not implemented yet (exercise 5.2)")
		}
		want, wantUsed, wantErr := referenceLines(in)
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) || used != wantUsed || (err != nil) != wantErr {
			t.Fatalf("DrainLines(%.200q)\n  want %d lines, %d bytes used, an error: %v\n   got %d lines, %d bytes used, error %v",
				in, len(want), wantUsed, wantErr, len(got), used, err)
		}
	})
}

// referenceLines is the rule of DrainLines written plainly: every line up to
// a '\n', at most MaxLine bytes with it, without its '\n' and one '\r'; the
// rest, shorter than MaxLine, waits; anything longer is an error.
func referenceLines(in []byte) (lines []string, used int, failed bool) {
	for {
		i := bytes.IndexByte(in[used:], '\n')
		switch {
		case i < 0:
			return lines, used, len(in)-used >= MaxLine
		case i+1 > MaxLine:
			return lines, used, true
		}
		lines = append(lines, string(bytes.TrimSuffix(in[used:used+i], []byte("\r"))))
		used += i + 1
	}
}
