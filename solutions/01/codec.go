package discovery

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strings"

	"serverlab/tools/given/wire"
)

// ReadFrame reads exactly one frame from r.
//
// TCP delivers a byte stream, not messages: one Read may return half a header
// or two frames at once. io.ReadFull keeps reading until it has the bytes it
// was asked for, so the header is read in one call and the payload in another,
// whatever the network did to them.
//
// The length is checked before anything is allocated: a client that claims a
// 1 GiB payload must not make the server allocate 1 GiB.
func ReadFrame(r io.Reader) (wire.Frame, error) {
	var hdr [wire.HeaderSize]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return wire.Frame{}, err // io.EOF before the first byte, io.ErrUnexpectedEOF inside
	}
	typ := int32(binary.LittleEndian.Uint32(hdr[0:4]))
	length := int32(binary.LittleEndian.Uint32(hdr[4:8]))
	if length < 0 || length > wire.MaxPayload {
		return wire.Frame{}, fmt.Errorf("%w: %d", wire.ErrLength, length)
	}
	sender, err := cString(hdr[8:40])
	if err != nil || sender == "" {
		return wire.Frame{}, fmt.Errorf("sender: %w", wire.ErrName)
	}
	target, err := cString(hdr[40:72])
	if err != nil {
		return wire.Frame{}, fmt.Errorf("target: %w", err)
	}
	payload := make([]byte, length)
	if _, err := io.ReadFull(r, payload); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF // the header promised more
		}
		return wire.Frame{}, err
	}
	return wire.Frame{Type: wire.Type(typ), Sender: sender, Target: target, Payload: payload}, nil
}

// cString returns the bytes of field before its first NUL. A field with no
// NUL is an error: the C original would read past the end of the array.
func cString(field []byte) (string, error) {
	i := bytes.IndexByte(field, 0)
	if i < 0 {
		return "", fmt.Errorf("%w: not NUL-terminated", wire.ErrName)
	}
	return string(field[:i]), nil
}

// WriteFrame writes f to w in a single Write call.
//
// One call, because the original's two (header, then payload) let Nagle's
// algorithm hold the payload back until the peer's delayed ACK, about 40 ms per
// message, and because a single write is what lets several goroutines share a
// connection in chapter 02 without interleaving their frames.
func WriteFrame(w io.Writer, f wire.Frame) error {
	if f.Sender == "" || !validName(f.Sender) {
		return fmt.Errorf("sender %q: %w", f.Sender, wire.ErrName)
	}
	if !validName(f.Target) {
		return fmt.Errorf("target %q: %w", f.Target, wire.ErrName)
	}
	if len(f.Payload) > wire.MaxPayload {
		return fmt.Errorf("%w: %d", wire.ErrLength, len(f.Payload))
	}
	buf := make([]byte, wire.HeaderSize, wire.HeaderSize+len(f.Payload))
	binary.LittleEndian.PutUint32(buf[0:4], uint32(f.Type))
	binary.LittleEndian.PutUint32(buf[4:8], uint32(len(f.Payload)))
	copy(buf[8:40], f.Sender) // the rest of each field stays zero: the NUL padding
	copy(buf[40:72], f.Target)
	buf = append(buf, f.Payload...)
	_, err := w.Write(buf)
	return err
}

// validName reports whether name fits a 32-byte field with room for the NUL.
func validName(name string) bool {
	return len(name) <= wire.MaxName && strings.IndexByte(name, 0) < 0
}
