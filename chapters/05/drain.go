package evloop

import (
	"errors"

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
	// TODO(ex 5.1): Done when: fn has seen, in order, every complete frame at
	// the front of in, and no partial one; the count returned is the bytes of
	// exactly the frames fn took, so the caller keeps the start of the next
	// frame; fn returning false stops the drain after that frame; an invalid
	// header is returned as the decoder's error (the stream cannot be
	// resynchronised). Checked by TestEx5_1_DrainFrames.
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
	// TODO(ex 5.2): Done when: fn has seen, in order, every complete line at
	// the front of in, without its newline and without one trailing carriage
	// return; the count returned covers exactly those lines, newlines included;
	// fn returning false stops after that line; a line over MaxLine bytes (its
	// newline counted), or an unfinished one that already has MaxLine bytes, is
	// ErrLineTooLong, so that a client cannot make the server buffer without
	// end. Checked by TestEx5_2_DrainLines.
	return 0, notImplemented("5.2", "DrainLines")
}
