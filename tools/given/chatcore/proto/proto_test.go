package proto

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func frame(body string) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

// The bytes the original server wrote, recorded on the wire.
func TestEncodeMatchesOriginal(t *testing.T) {
	cases := []struct {
		m    Message
		want string
	}{
		{AuthenticateResponse{RequestID: 4, User: User{ID: 102, Name: "aliceX1"}},
			`{"payload":{"request_id":4,"user":{"id":102,"name":"aliceX1"}},"type_id":116}`},
		{ReceiveChat{ChannelID: 2, Content: "<hi & bye>", UserID: 7},
			`{"payload":{"channel_id":2,"content":"<hi & bye>","user_id":7},"type_id":103}`},
		{GetChatsResponse{ChannelID: 9, RequestID: 3},
			`{"payload":{"channel_id":9,"messages":[],"request_id":3},"type_id":106}`},
		{ErrorResponse{RequestID: 1, Value: MsgNotAuthorized},
			`{"payload":{"request_id":1,"value":"Not authorized."},"type_id":100}`},
		{Shutdown{}, `{"payload":{},"type_id":102}`},
		{ChannelCreateEvent{Channel: Channel{ID: 1, Name: "général"}, UserID: 5},
			`{"payload":{"channel":{"id":1,"name":"général"},"user_id":5},"type_id":129}`},
	}
	for _, c := range cases {
		got, err := Encode(c.m)
		require.NoError(t, err, "Encode(%#v)", c.m)
		assert.Equal(t, frame(c.want), got, "Encode(%#v)", c.m)
	}
}

func TestRoundTripEveryType(t *testing.T) {
	for id, info := range types {
		m := reflect.New(info.typ).Elem().Interface().(Message)
		b, err := Encode(m)
		require.NoError(t, err, "type %d", id)
		got, err := Read(bytes.NewReader(b))
		require.NoError(t, err, "type %d: decode %q", id, b)
		assert.Equal(t, nonNil(m), nonNil(got), "type %d: round trip", id)
	}
}

func TestDecodeRules(t *testing.T) {
	cases := []struct {
		body string
		want error // nil: decodes
	}{
		{`{"type_id":119,"payload":{"request_id":2}}`, nil},
		{`{"payload":{"request_id":2,"extra":true},"type_id":119,"more":1}`, nil},
		{`{"payload":null,"type_id":102}`, nil},
		{`{"payload":{"request_id":2},"type_id":119} trailing`, ErrMalformed},
		{`[1,2]`, ErrMalformed},
		{``, ErrMalformed},
		{`{"payload":{}}`, ErrMalformed},
		{`{"type_id":119}`, ErrMalformed},
		{`{"payload":{"request_id":2},"type_id":"119"}`, ErrMalformed},
		{`{"payload":{"request_id":2},"type_id":4242}`, ErrUnknownType},
		{`{"payload":{"request_id":"2"},"type_id":119}`, ErrMalformed},
		{`{"payload":{"content":5},"type_id":104}`, ErrMalformed},
		{`{"payload":{"request_id":7},"type_id":115}`, ErrMalformed},
		{`{"payload":[],"type_id":119}`, ErrMalformed},
	}
	for _, c := range cases {
		_, err := Decode([]byte(c.body))
		if c.want == nil {
			assert.NoError(t, err, "Decode(%s)", c.body)
		} else {
			assert.ErrorIs(t, err, c.want, "Decode(%s)", c.body)
		}
	}
	_, err := Decode([]byte(`{"payload":{"request_id":7,"name":"a"},"type_id":115}`))
	var de *DecodeError
	if assert.ErrorAs(t, err, &de, "missing password: want a DecodeError") {
		assert.True(t, de.HasRequestID, "missing password: the DecodeError has the request ID")
		assert.Equal(t, uint64(7), de.RequestID, "missing password: the DecodeError's request ID")
		assert.Equal(t, TypeAuthenticateRequest, de.Type, "missing password: the DecodeError's type")
	}
}

func TestReadFrameLimits(t *testing.T) {
	at := append(binary.BigEndian.AppendUint32(nil, MaxFrame), make([]byte, MaxFrame)...)
	body, err := ReadFrame(bytes.NewReader(at), nil)
	assert.NoError(t, err, "a frame of exactly 1 MiB: want it accepted")
	assert.Equal(t, MaxFrame, len(body), "a frame of exactly 1 MiB: length") // not Len: it would print the MiB
	over := binary.BigEndian.AppendUint32(nil, MaxFrame+1)
	_, err = ReadFrame(bytes.NewReader(over), nil)
	assert.ErrorIs(t, err, ErrTooLarge, "a frame of 1 MiB + 1")
	if _, err := ReadFrame(bytes.NewReader(nil), nil); err != io.EOF {
		t.Errorf("empty stream: %v; want io.EOF", err)
	}
	if _, err := ReadFrame(bytes.NewReader(frame("abc")[:5]), nil); err != io.ErrUnexpectedEOF {
		t.Errorf("cut frame: %v; want io.ErrUnexpectedEOF", err)
	}
	_, err = Encode(WriteChat{Content: strings.Repeat("x", MaxFrame)})
	assert.ErrorIs(t, err, ErrTooLarge, "encoding a body over 1 MiB")
}

// FuzzDecode: the decoder never panics, and whatever it accepts survives a
// round trip unchanged.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"payload":{"request_id":2},"type_id":119}`))
	f.Add([]byte(`{"payload":{"channel_id":1,"content":"hi","user_id":3},"type_id":103}`))
	f.Add([]byte(`{"payload":{"request_id":1,"user_ids":[1,2,3]},"type_id":111}`))
	f.Add([]byte(`{"payload":null,"type_id":102}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := Decode(body)
		if err != nil {
			return
		}
		b, err := Encode(m)
		if err != nil {
			if errors.Is(err, ErrTooLarge) {
				return
			}
			t.Fatalf("decoded %q to %#v, which does not encode: %v", body, m, err)
		}
		again, err := Read(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("re-encoded %#v as %q, which does not decode: %v", m, b, err)
		}
		if !reflect.DeepEqual(nonNil(again), nonNil(m)) {
			t.Fatalf("round trip changed %#v into %#v", m, again)
		}
	})
}

// FuzzReadFrame: reading arbitrary bytes never panics, never returns a body
// over MaxFrame, and a too-large length is refused before its body is read.
func FuzzReadFrame(f *testing.F) {
	f.Add(frame(`{"payload":{},"type_id":102}`))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0x10, 0, 1})
	f.Fuzz(func(t *testing.T, stream []byte) {
		r := bytes.NewReader(stream)
		for first := true; ; first = false {
			body, err := ReadFrame(r, nil)
			if first && len(stream) >= HeaderSize && binary.BigEndian.Uint32(stream) > MaxFrame && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("length %d: err %v; want ErrTooLarge", binary.BigEndian.Uint32(stream), err)
			}
			if err != nil {
				return
			}
			if len(body) > MaxFrame {
				t.Fatalf("body of %d bytes", len(body))
			}
			Decode(body)
		}
	})
}

// The codec's cost per message, to judge whether encoding/json is fast
// enough: the server decodes each request once and encodes each broadcast
// once, however many receive it.
func BenchmarkEncodeReceiveChat(b *testing.B) {
	m := ReceiveChat{ChannelID: 1, Content: "a chat message of a typical length, say sixty bytes", UserID: 42}
	var buf []byte
	for b.Loop() {
		buf, _ = AppendFrame(buf[:0], m)
	}
}

func BenchmarkDecodeWriteChat(b *testing.B) {
	f, _ := Encode(WriteChat{Content: "a chat message of a typical length, say sixty bytes"})
	body := f[HeaderSize:]
	for b.Loop() {
		if _, err := Decode(body); err != nil {
			b.Fatal(err)
		}
	}
}
