package evloop

import (
	"bytes"
	"errors"
	"fmt"

	"serverlab/tools/given/wire"
)

// DrainFrames is the original select() server's drain_buffer: it decodes
// the complete chat frames at the front of in and calls fn for each, in
// order, until in holds no complete frame or fn returns false (the
// connection is congested or closed: stop for now). It returns how many bytes
// the frames it handed to fn took; the rest, the start of a frame that has not
// fully arrived, is for the caller to keep.
//
// A frame's payload aliases in: fn must copy what it keeps. An invalid header
// is an error, and the stream cannot be resynchronised after it.
func DrainFrames(in []byte, fn func(wire.Frame) bool) (int, error) {
	used := 0
	for {
		f, n, err := wire.Decode(in[used:])
		if err != nil {
			return used, err
		}
		if n == 0 {
			return used, nil // not a whole frame yet: wait for more bytes
		}
		used += n
		if !fn(f) {
			return used, nil
		}
	}
}

// MaxLine is the longest request line DrainLines accepts, '\n' included: the
// original's MAXLINE. The loop keeps a partial line in memory until its end
// arrives, so without a limit one client could make the server buffer
// without end.
const MaxLine = 8192

// ErrLineTooLong is returned by DrainLines for a line over MaxLine bytes.
var ErrLineTooLong = errors.New("request line too long")

// DrainLines is DrainFrames for line protocols: it calls fn for each complete
// '\n'-terminated line at the front of in (without the '\n' and without a
// trailing '\r'), in order, until no complete line is left or fn returns
// false. It returns how many bytes the lines it handed to fn took. Pipelined
// requests, several lines in one read, are all handed over, in order: the
// original event server answered only the first.
func DrainLines(in []byte, fn func(line []byte) bool) (int, error) {
	used := 0
	for {
		i := bytes.IndexByte(in[used:], '\n')
		if i < 0 {
			if len(in)-used >= MaxLine {
				return used, fmt.Errorf("%w: no '\\n' within %d bytes", ErrLineTooLong, MaxLine)
			}
			return used, nil
		}
		if i+1 > MaxLine {
			return used, fmt.Errorf("%w: %d bytes (limit %d)", ErrLineTooLong, i+1, MaxLine)
		}
		line := bytes.TrimSuffix(in[used:used+i], []byte{'\r'})
		used += i + 1
		if !fn(line) {
			return used, nil
		}
	}
}
