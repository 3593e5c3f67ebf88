// Package proto is the wire codec of chatcore, the chat service that chapter
// 07 re-creates (github.com/ebroschin/chatcore): every frame is a 4-byte
// big-endian length followed by that many bytes of compact JSON,
//
//	{"payload":{…},"type_id":N}
//
// with the keys of every object in alphabetical order, as the original writes
// them. The message types are the structs of messages.go; docs/chatcore.md is
// the protocol for people.
//
// This is the one home of the codec: the chapter's server, the client
// (tools/cmd/chatcore-client), the load generator and the test suite all import
// it.
package proto

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sync"
)

// HeaderSize is the length prefix; MaxFrame is the largest body a receiver
// accepts (1 MiB, exactly: a frame of MaxFrame bytes is accepted).
const (
	HeaderSize = 4
	MaxFrame   = 1 << 20
)

// Errors of reading and decoding. A receiver can go on reading after
// ErrMalformed and ErrUnknownType (the frame was read whole); after
// ErrTooLarge it cannot, because the body was not read.
var (
	ErrTooLarge    = errors.New("chatcore: frame larger than 1 MiB")
	ErrMalformed   = errors.New("chatcore: malformed message")
	ErrUnknownType = errors.New("chatcore: unknown message type")
)

// DecodeError is a frame whose envelope was readable but whose payload was
// not: it names the type and, when the payload had one, the request_id, so
// that the server can answer the right request.
type DecodeError struct {
	Type         Type
	RequestID    uint64
	HasRequestID bool
	Err          error // why: a missing key, a wrong JSON type
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("chatcore: malformed payload of type %d: %v", e.Type, e.Err)
}

// Unwrap makes errors.Is(err, ErrMalformed) true.
func (e *DecodeError) Unwrap() []error { return []error{ErrMalformed, e.Err} }

// ReadFrame reads one frame from r and returns its body. It reuses buf when
// the body fits. A length over MaxFrame returns ErrTooLarge without reading
// the body; an end of stream between frames is io.EOF, inside one
// io.ErrUnexpectedEOF.
func ReadFrame(r io.Reader, buf []byte) ([]byte, error) {
	var hdr [HeaderSize]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > MaxFrame {
		return nil, fmt.Errorf("%w: %d bytes", ErrTooLarge, n)
	}
	if int(n) > cap(buf) {
		buf = make([]byte, n)
	}
	body := buf[:n]
	if _, err := io.ReadFull(r, body); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return body, nil
}

// Read reads and decodes one message.
func Read(r io.Reader) (Message, error) {
	body, err := ReadFrame(r, nil)
	if err != nil {
		return nil, err
	}
	return Decode(body)
}

// Write encodes m and writes it as one frame with one Write call.
func Write(w io.Writer, m Message) error {
	b, err := Encode(m)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// Encode returns m as a whole frame: length prefix and body.
func Encode(m Message) ([]byte, error) { return AppendFrame(nil, m) }

// bufPool holds the scratch buffers of the JSON encoder.
var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// AppendFrame appends the frame of m to dst. Strings are written as raw UTF-8
// (no \u003c for '<', as the original), nil slices as [], and the body may
// not exceed MaxFrame: a receiver would drop the connection.
func AppendFrame(dst []byte, m Message) ([]byte, error) {
	buf := bufPool.Get().(*bytes.Buffer)
	defer bufPool.Put(buf)
	buf.Reset()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(nonNil(m)); err != nil {
		return dst, fmt.Errorf("chatcore: encode type %d: %w", m.Type(), err)
	}
	payload := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	n := len(`{"payload":`) + len(payload) + len(`,"type_id":}`) + decimalLen(uint64(m.Type()))
	if n > MaxFrame {
		return dst, fmt.Errorf("%w: type %d would be %d bytes", ErrTooLarge, m.Type(), n)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(n))
	dst = append(dst, `{"payload":`...)
	dst = append(dst, payload...)
	dst = append(dst, `,"type_id":`...)
	dst = fmt.Appendf(dst, "%d}", uint64(m.Type()))
	return dst, nil
}

func decimalLen(v uint64) int {
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}

// nonNil replaces the nil slices of the list responses by empty ones, so
// that they encode as [] (as the original does) and never as null.
func nonNil(m Message) Message {
	switch v := m.(type) {
	case GetChatsResponse:
		if v.Messages == nil {
			v.Messages = []ChatMessage{}
		}
		return v
	case GetUsersResponse:
		if v.Users == nil {
			v.Users = []User{}
		}
		return v
	case GetChannelsResponse:
		if v.Channels == nil {
			v.Channels = []Channel{}
		}
		return v
	case GetUsersRequest:
		if v.UserIDs == nil {
			v.UserIDs = []uint32{}
		}
		return v
	}
	return m
}

// envelope is the top level of every body.
type envelope struct {
	Payload json.RawMessage `json:"payload"`
	TypeID  json.RawMessage `json:"type_id"`
}

// Decode parses a frame body. The rules are the original's, made explicit:
// the body must be one JSON object (nothing after it) with a "payload" and a
// numeric "type_id"; the type must be one of this package's; every field of
// the payload must be present with the right JSON type. Extra keys are
// ignored. A broken envelope is ErrMalformed, an unknown type ErrUnknownType,
// a broken payload a *DecodeError.
//
// One difference: the original converts any JSON number (3.7 becomes 3, -1
// becomes 2^64-1); this decoder accepts only integers that fit the field.
func Decode(body []byte) (Message, error) {
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if env.Payload == nil || env.TypeID == nil {
		return nil, fmt.Errorf("%w: want keys \"payload\" and \"type_id\"", ErrMalformed)
	}
	var id uint64
	if err := json.Unmarshal(env.TypeID, &id); err != nil {
		return nil, fmt.Errorf("%w: type_id: %v", ErrMalformed, err)
	}
	t := Type(id)
	info, ok := types[t]
	if !ok {
		return nil, fmt.Errorf("%w: %d", ErrUnknownType, id)
	}
	if t == TypeShutdown {
		return Shutdown{}, nil // any payload, even null
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(env.Payload, &keys); err != nil || keys == nil {
		return nil, &DecodeError{Type: t, Err: errors.New("payload is not an object")}
	}
	derr := &DecodeError{Type: t}
	if raw, ok := keys["request_id"]; ok && json.Unmarshal(raw, &derr.RequestID) == nil {
		derr.HasRequestID = true
	}
	for _, k := range info.keys {
		if _, ok := keys[k]; !ok {
			derr.Err = fmt.Errorf("missing key %q", k)
			return nil, derr
		}
	}
	ptr := reflect.New(info.typ)
	if err := json.Unmarshal(env.Payload, ptr.Interface()); err != nil {
		derr.Err = err
		return nil, derr
	}
	return ptr.Elem().Interface().(Message), nil
}

// typeInfo is what Decode needs to know of a message type.
type typeInfo struct {
	typ  reflect.Type
	keys []string // required payload keys
}

// types maps every type id to its struct, built once from the structs.
var types = func() map[Type]typeInfo {
	all := []Message{
		Print{}, ErrorResponse{}, Error{}, Shutdown{}, ReceiveChat{}, WriteChat{},
		GetChatsRequest{}, GetChatsResponse{}, CreateChannelRequest{}, CreateChannelResponse{},
		CreateUserRequest{}, CreateUserResponse{}, GetUsersRequest{}, GetUsersResponse{},
		GetUserRequest{}, GetUserResponse{}, AuthenticateRequest{}, AuthenticateResponse{},
		JoinChannelRequest{}, JoinChannelResponse{}, GetChannelsRequest{}, GetChannelsResponse{},
		GetChannelRequest{}, GetChannelResponse{}, LogoutRequest{}, LogoutResponse{},
		UserLogoutEvent{}, UserLoginEvent{}, ChannelLeaveEvent{}, ChannelJoinEvent{},
		ChannelCreateEvent{}, HeartbeatRequest{}, HeartbeatResponse{},
	}
	m := make(map[Type]typeInfo, len(all))
	for _, msg := range all {
		rt := reflect.TypeOf(msg)
		info := typeInfo{typ: rt}
		for i := range rt.NumField() {
			info.keys = append(info.keys, rt.Field(i).Tag.Get("json"))
		}
		m[msg.Type()] = info
	}
	return m
}()

// Known reports whether t is a type of the protocol (99–131).
func Known(t Type) bool {
	_, ok := types[t]
	return ok
}

// Conn is a client's side of a connection, for tools and tests: buffered
// reads, one frame per Write, and request ids from a counter that starts at
// 1, as the original's clients allocate them.
type Conn struct {
	rw   io.ReadWriter
	r    *bufio.Reader
	mu   sync.Mutex
	next uint64
}

// NewConn wraps a connection.
func NewConn(rw io.ReadWriter) *Conn {
	return &Conn{rw: rw, r: bufio.NewReader(rw)}
}

// NextID returns a fresh request id.
func (c *Conn) NextID() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	return c.next
}

// Send writes one message. It is safe to call from several goroutines.
func (c *Conn) Send(m Message) error {
	b, err := Encode(m)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err = c.rw.Write(b)
	return err
}

// Recv reads the next message. A frame that does not decode is returned as
// its error, and the next Recv reads the frame after it.
func (c *Conn) Recv() (Message, error) { return Read(c.r) }
