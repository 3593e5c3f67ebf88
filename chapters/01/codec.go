package discovery

import (
	"io"

	"serverlab/tools/given/wire"
)

// ReadFrame reads exactly one frame from r.
//
// It returns io.EOF if r ends before the first byte, io.ErrUnexpectedEOF if r
// ends inside a frame, an error wrapping wire.ErrLength if payload_length is
// negative or over wire.MaxPayload, and an error wrapping wire.ErrName if the
// sender is empty or a name field has no NUL within its 32 bytes.
func ReadFrame(r io.Reader) (wire.Frame, error) {
	// TODO(ex 1.1): Done when: ReadFrame returns one whole frame or an error,
	// never a part: the full 72-byte header, then exactly payload_length bytes
	// (one Read may return fewer bytes than asked for); type and length are
	// little-endian; a length over the limit, or negative as a C int32, is
	// rejected before anything is allocated (an error wrapping wire.ErrLength);
	// sender and target are the bytes before their first NUL, and a name field
	// with no NUL, or an empty sender, is an error wrapping wire.ErrName; a
	// stream that ends inside a frame is io.ErrUnexpectedEOF, one that ends
	// between frames io.EOF. Checked by TestEx1_1_ReadFrame.
	return wire.Frame{}, notImplemented("1.1", "ReadFrame")
}

// WriteFrame writes f to w in a single Write call.
//
// It returns an error wrapping wire.ErrName, and writes nothing, if the
// sender is empty or a name is longer than wire.MaxName bytes or contains a
// NUL; and an error wrapping wire.ErrLength if the payload is longer than
// wire.MaxPayload.
func WriteFrame(w io.Writer, f wire.Frame) error {
	// TODO(ex 1.2): Done when: a frame with a name or a payload that the format
	// cannot hold is refused before anything is written, and a valid one goes
	// out byte for byte as ReadFrame reads it (each name NUL-padded to 32
	// bytes), in one Write call, so that two writers can never interleave their
	// halves. Checked by TestEx1_2_WriteFrame.
	return notImplemented("1.2", "WriteFrame")
}
