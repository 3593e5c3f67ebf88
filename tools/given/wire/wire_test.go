package wire

import (
	"bytes"
	"encoding/binary"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func frames() []Frame {
	return []Frame{
		{Type: Registration, Sender: "alice", Payload: []byte("pass123")},
		{Type: Broadcast, Sender: "bob", Target: "ALL", Payload: []byte("hi")},
		{Type: QueryUser, Sender: "carol"},
		{Type: PrivateMsg, Sender: strings.Repeat("s", MaxName), Target: strings.Repeat("t", MaxName), Payload: []byte{0, 1, 2}},
		{Type: Broadcast, Sender: "dave", Payload: bytes.Repeat([]byte{7}, MaxPayload)},
	}
}

func TestLayout(t *testing.T) {
	b, err := Encode(Frame{Type: Login, Sender: "alice", Target: "bob", Payload: []byte("pw")})
	require.NoError(t, err)
	want := make([]byte, 0, 74)
	want = append(want, 2, 0, 0, 0, 2, 0, 0, 0) // type and length, little-endian
	want = append(want, "alice"...)
	want = append(want, make([]byte, 27)...)
	want = append(want, "bob"...)
	want = append(want, make([]byte, 29)...)
	want = append(want, "pw"...)
	require.Equal(t, want, b, "encoding")
}

func TestRoundTrip(t *testing.T) {
	readers := map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"one byte": iotest.OneByteReader,
		"half":     iotest.HalfReader,
		"data+EOF": iotest.DataErrReader,
	}
	for name, wrap := range readers {
		for _, f := range frames() {
			b, err := Encode(f)
			require.NoError(t, err, "Encode(%v)", f)
			got, err := ReadFrame(wrap(bytes.NewReader(b)))
			require.NoError(t, err, "%s: ReadFrame(%v)", name, f)
			assert.Equal(t, same(f), same(got), "%s: round trip", name)
			dec, n, err := Decode(b)
			if assert.NoError(t, err, "Decode(%v)", f) {
				assert.Equal(t, len(b), n, "Decode(%v): bytes used", f)
				assert.Equal(t, same(f), same(dec), "Decode(%v)", f)
			}
		}
	}
}

// same makes an empty payload nil, so that a frame compares equal to what
// ReadFrame returns for it (which allocates the empty payload).
func same(f Frame) Frame {
	if len(f.Payload) == 0 {
		f.Payload = nil
	}
	return f
}

func header(typ, length int32, sender, target string) []byte {
	b := make([]byte, HeaderSize)
	binary.LittleEndian.PutUint32(b[0:], uint32(typ))
	binary.LittleEndian.PutUint32(b[4:], uint32(length))
	copy(b[8:40], sender)
	copy(b[40:72], target)
	return b
}

func TestReadErrors(t *testing.T) {
	full, _ := Encode(frames()[1])
	cases := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty stream", nil, io.EOF},
		{"truncated header", full[:40], io.ErrUnexpectedEOF},
		{"truncated payload", full[:HeaderSize+1], io.ErrUnexpectedEOF},
		{"length -1", header(3, -1, "bob", ""), ErrLength},
		{"length 1<<30", header(3, 1<<30, "bob", ""), ErrLength},
		{"length MaxPayload+1", header(3, MaxPayload+1, "bob", ""), ErrLength},
		{"sender not NUL-terminated", header(3, 0, strings.Repeat("x", 32), ""), ErrName},
		{"target not NUL-terminated", header(3, 0, "bob", strings.Repeat("x", 32)), ErrName},
		{"empty sender", header(3, 0, "", ""), ErrName},
	}
	for _, c := range cases {
		_, err := ReadFrame(bytes.NewReader(c.in))
		assert.ErrorIs(t, err, c.want, "%s: ReadFrame", c.name)
	}
}

func TestDecodeIncomplete(t *testing.T) {
	b, _ := Encode(frames()[0])
	for i := 0; i < len(b); i++ {
		_, n, err := Decode(b[:i])
		require.NoError(t, err, "Decode of %d of %d bytes (want: wait for more)", i, len(b))
		require.Zero(t, n, "Decode of %d of %d bytes used bytes (want: wait for more)", i, len(b))
	}
	two := append(append([]byte{}, b...), b...)
	_, n, err := Decode(two)
	require.NoError(t, err, "Decode of two frames")
	require.Equal(t, len(b), n, "Decode of two frames: bytes used")
}

func TestEncodeErrors(t *testing.T) {
	cases := []struct {
		name string
		f    Frame
		want error
	}{
		{"empty sender", Frame{Type: 3}, ErrName},
		{"32-byte sender", Frame{Type: 3, Sender: strings.Repeat("x", 32)}, ErrName},
		{"32-byte target", Frame{Type: 3, Sender: "a", Target: strings.Repeat("x", 32)}, ErrName},
		{"NUL in name", Frame{Type: 3, Sender: "a\x00b"}, ErrName},
		{"oversized payload", Frame{Type: 3, Sender: "a", Payload: make([]byte, MaxPayload+1)}, ErrLength},
	}
	for _, c := range cases {
		var w countingWriter
		assert.ErrorIs(t, WriteFrame(&w, c.f), c.want, "%s: WriteFrame", c.name)
		assert.Zero(t, w.writes, "%s: an invalid frame was written", c.name)
	}
}

type countingWriter struct {
	bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

func TestOneWritePerFrame(t *testing.T) {
	for _, f := range frames() {
		var w countingWriter
		require.NoError(t, WriteFrame(&w, f))
		assert.Equal(t, 1, w.writes, "WriteFrame(%v): number of writes", f)
	}
}

// FuzzReadFrame checks that no input crashes the decoder, that ReadFrame and
// Decode agree, and that whatever decodes re-encodes to the same bytes up to
// the name padding.
func FuzzReadFrame(f *testing.F) {
	for _, fr := range frames()[:4] {
		b, _ := Encode(fr)
		f.Add(b)
	}
	f.Add(header(3, -1, "bob", ""))
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := ReadFrame(bytes.NewReader(in))
		dec, n, derr := Decode(in)
		if err != nil {
			if derr == nil && n > 0 {
				t.Fatalf("ReadFrame failed (%v) but Decode succeeded", err)
			}
			return
		}
		if derr != nil || n == 0 {
			t.Fatalf("ReadFrame succeeded but Decode = %d, %v", n, derr)
		}
		if dec.Sender != got.Sender || dec.Target != got.Target || !bytes.Equal(dec.Payload, got.Payload) {
			t.Fatalf("ReadFrame %v != Decode %v", got, dec)
		}
		again, err := Encode(got)
		if err != nil {
			t.Fatalf("re-encoding %v: %v", got, err)
		}
		back, err := ReadFrame(bytes.NewReader(again))
		if err != nil || back.Sender != got.Sender || back.Type != got.Type || !bytes.Equal(back.Payload, got.Payload) {
			t.Fatalf("re-encoded frame decodes to %v (%v), want %v", back, err, got)
		}
	})
}
