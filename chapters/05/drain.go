package evloop

import (
	"errors"

	"serverlab/tools/wire"
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
	// TODO(ex 5.1): loop: wire.Decode(in[used:]) gives a frame and its size n
	// (n == 0 and no error: not a whole frame yet, so stop and return used);
	// pass a decode error on; add n to used, call fn(f) and stop if it
	// returns false. Checked by TestEx5_1_DrainFrames.
	return 0, notImplemented("5.1", "DrainFrames")
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
	// TODO(ex 5.2): loop: find the next '\n' after used (bytes.IndexByte); if
	// there is none, return used, or ErrLineTooLong if what is left is MaxLine
	// bytes or more; a line longer than MaxLine ('\n' included) is
	// ErrLineTooLong too; hand fn the line without '\n' and without a
	// trailing '\r' (bytes.TrimSuffix), add its length plus one to used, and
	// stop if fn returns false. Checked by TestEx5_2_DrainLines.
	return 0, notImplemented("5.2", "DrainLines")
}
