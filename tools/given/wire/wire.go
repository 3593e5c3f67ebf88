// Package wire is the chat protocol v1 codec (docs/protocols.md §1): a
// 72-byte header followed by a payload.
//
//	offset  size  field
//	0       4     type            int32, little-endian
//	4       4     payload_length  int32, little-endian
//	8       32    sender          NUL-padded, at most 31 bytes of name
//	40      32    target          NUL-padded, at most 31 bytes of name
//	72      n     payload         payload_length bytes
//
// The original C++ programs send their header struct raw, so the integers are in
// the sender's host byte order; every machine they ran on was little-endian, and
// this codec fixes that order so that it stays compatible with them.
//
// This is the one home of the codec: the chat servers of chapters 02, 05 and the
// chat client, load generator and test suites all import it. (Chapter 01 asks the
// student to write a teaching copy, which its suite checks against this one.)
package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Sizes and limits of the frame format.
const (
	HeaderSize = 72 // bytes before the payload
	NameSize   = 32 // bytes of each name field, NUL included
	MaxName    = NameSize - 1
	MaxPayload = 64 << 10 // the course's payload limit; the original had none
)

// Type is the first header field.
type Type int32

// The frame types of the protocol.
const (
	Registration Type = 1 // client → discovery server; payload: password
	Login        Type = 2 // client → chat server; payload: password
	Broadcast    Type = 3 // to every other logged-in client
	PrivateMsg   Type = 4 // to Target only
	QueryUser    Type = 5 // list registered users
	StatusUpdate Type = 6 // reserved: accepted and ignored
)

var typeNames = map[Type]string{
	Registration: "REGISTRATION", Login: "LOGIN", Broadcast: "BROADCAST",
	PrivateMsg: "PRIVATE_MSG", QueryUser: "QUERY_USER", StatusUpdate: "STATUS_UPDATE",
}

func (t Type) String() string {
	if s, ok := typeNames[t]; ok {
		return s
	}
	return fmt.Sprintf("Type(%d)", int32(t))
}

// ServerName is the sender of every frame the servers write on their own behalf.
// No user may register it (tools/given/users reserves it), so a frame from
// "server" always comes from the server.
const ServerName = "server"

// Everyone is the target the course's clients put in a BROADCAST. The chat
// servers relay a broadcast's target as the client wrote it, as the original
// does (its client writes "ALL"; another may write "all"): only the sender
// is rewritten, to the authenticated name. Like ServerName, it cannot be
// registered as a user name.
const Everyone = "ALL"

// Errors the codec returns, wrapped with detail; test them with errors.Is.
var (
	// ErrLength: payload_length is negative or over MaxPayload.
	ErrLength = errors.New("wire: payload length out of range")
	// ErrName: a name is empty (sender only), longer than MaxName bytes,
	// contains a NUL, or (when reading) is not NUL-terminated within NameSize.
	ErrName = errors.New("wire: invalid name")
)

// Frame is one decoded message.
type Frame struct {
	Type    Type
	Sender  string
	Target  string
	Payload []byte
}

func (f Frame) String() string {
	return fmt.Sprintf("{%v sender=%q target=%q payload=%q}", f.Type, f.Sender, f.Target, f.Payload)
}

// Header is the fixed part of a frame, decoded on its own so that an event loop
// can learn how many payload bytes to wait for.
type Header struct {
	Type          Type
	PayloadLength int
	Sender        string
	Target        string
}

// DecodeHeader decodes and validates the first HeaderSize bytes of b.
// It panics if b is shorter; callers check len(b) first.
func DecodeHeader(b []byte) (Header, error) {
	_ = b[HeaderSize-1]
	n := int32(binary.LittleEndian.Uint32(b[4:8]))
	h := Header{Type: Type(int32(binary.LittleEndian.Uint32(b[0:4]))), PayloadLength: int(n)}
	if n < 0 || n > MaxPayload {
		return h, fmt.Errorf("%w: %d (limit %d)", ErrLength, n, MaxPayload)
	}
	var err error
	if h.Sender, err = decodeName(b[8:40]); err != nil {
		return h, fmt.Errorf("sender: %w", err)
	}
	if h.Sender == "" {
		return h, fmt.Errorf("sender: %w: empty", ErrName)
	}
	if h.Target, err = decodeName(b[40:72]); err != nil {
		return h, fmt.Errorf("target: %w", err)
	}
	return h, nil
}

// decodeName reads a C string: the bytes before the first NUL, which must come
// within the field. Bytes after it are padding and ignored, as in C.
func decodeName(field []byte) (string, error) {
	i := bytes.IndexByte(field, 0)
	if i < 0 {
		return "", fmt.Errorf("%w: not NUL-terminated within %d bytes", ErrName, NameSize)
	}
	return string(field[:i]), nil
}

// ReadFrame reads exactly one frame from r. A stream that ends cleanly before
// the first byte gives io.EOF; one that ends inside a frame gives
// io.ErrUnexpectedEOF. Invalid headers give ErrLength or ErrName, after which
// the stream cannot be resynchronised and the connection should be closed.
func ReadFrame(r io.Reader) (Frame, error) {
	var hdr [HeaderSize]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return Frame{}, err
	}
	h, err := DecodeHeader(hdr[:])
	if err != nil {
		return Frame{}, err
	}
	f := Frame{Type: h.Type, Sender: h.Sender, Target: h.Target, Payload: make([]byte, h.PayloadLength)}
	if _, err := io.ReadFull(r, f.Payload); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return Frame{}, err
	}
	return f, nil
}

// Decode decodes one frame from the front of buf, for callers that keep their
// own buffer (an event loop). It returns the frame and the number of bytes it
// used; n == 0 with a nil error means buf does not yet hold a whole frame.
// The frame's payload aliases buf.
func Decode(buf []byte) (f Frame, n int, err error) {
	if len(buf) < HeaderSize {
		return Frame{}, 0, nil
	}
	h, err := DecodeHeader(buf)
	if err != nil {
		return Frame{}, 0, err
	}
	end := HeaderSize + h.PayloadLength
	if len(buf) < end {
		return Frame{}, 0, nil
	}
	return Frame{Type: h.Type, Sender: h.Sender, Target: h.Target, Payload: buf[HeaderSize:end:end]}, end, nil
}

// Append validates f and appends its encoding to dst.
func Append(dst []byte, f Frame) ([]byte, error) {
	if len(f.Payload) > MaxPayload {
		return dst, fmt.Errorf("%w: %d (limit %d)", ErrLength, len(f.Payload), MaxPayload)
	}
	if f.Sender == "" {
		return dst, fmt.Errorf("sender: %w: empty", ErrName)
	}
	if err := checkName(f.Sender); err != nil {
		return dst, fmt.Errorf("sender: %w", err)
	}
	if err := checkName(f.Target); err != nil {
		return dst, fmt.Errorf("target: %w", err)
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(f.Type))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(f.Payload)))
	dst = appendName(dst, f.Sender)
	dst = appendName(dst, f.Target)
	return append(dst, f.Payload...), nil
}

func checkName(s string) error {
	if len(s) > MaxName {
		return fmt.Errorf("%w: %d bytes (limit %d)", ErrName, len(s), MaxName)
	}
	if bytes.IndexByte([]byte(s), 0) >= 0 {
		return fmt.Errorf("%w: contains NUL", ErrName)
	}
	return nil
}

func appendName(dst []byte, s string) []byte {
	dst = append(dst, s...)
	var pad [NameSize]byte
	return append(dst, pad[:NameSize-len(s)]...)
}

// Encode returns the encoding of f.
func Encode(f Frame) ([]byte, error) {
	return Append(make([]byte, 0, HeaderSize+len(f.Payload)), f)
}

// WriteFrame writes f with a single Write call. One write per frame matters
// twice: concurrent writers that each hold a connection's lock for one call
// cannot interleave, and with Nagle's algorithm a header and payload sent by two
// writes stall for the peer's delayed ACK (the original's ~40 ms per message).
func WriteFrame(w io.Writer, f Frame) error {
	b, err := Encode(f)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
