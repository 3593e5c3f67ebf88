package discovery

import (
	"io"

	"serverlab/tools/wire"
)

// ReadFrame reads exactly one frame from r.
//
// It returns io.EOF if r ends before the first byte, io.ErrUnexpectedEOF if r
// ends inside a frame, an error wrapping wire.ErrLength if payload_length is
// negative or over wire.MaxPayload, and an error wrapping wire.ErrName if the
// sender is empty or a name field has no NUL within its 32 bytes.
func ReadFrame(r io.Reader) (wire.Frame, error) {
	// TODO(ex 1.1): read the 72-byte header with io.ReadFull (one Read may
	// return fewer bytes than you asked for); decode type and payload_length
	// with encoding/binary's LittleEndian; check the length BEFORE allocating
	// the payload; decode sender and target as C strings (the bytes before the
	// first NUL); then io.ReadFull the payload, turning io.EOF into
	// io.ErrUnexpectedEOF there. Checked by TestEx1_1_ReadFrame.
	return wire.Frame{}, notImplemented("1.1", "ReadFrame")
}

// WriteFrame writes f to w in a single Write call.
//
// It returns an error wrapping wire.ErrName, and writes nothing, if the
// sender is empty or a name is longer than wire.MaxName bytes or contains a
// NUL; and an error wrapping wire.ErrLength if the payload is longer than
// wire.MaxPayload.
func WriteFrame(w io.Writer, f wire.Frame) error {
	// TODO(ex 1.2): validate the names and the payload length; build header
	// and payload in ONE byte slice (type and length little-endian, each name
	// copied into a zeroed 32-byte field) and call w.Write once.
	// Checked by TestEx1_2_WriteFrame.
	return notImplemented("1.2", "WriteFrame")
}
