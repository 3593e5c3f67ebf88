package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
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
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, 0, 74)
	want = append(want, 2, 0, 0, 0, 2, 0, 0, 0) // type and length, little-endian
	want = append(want, "alice"...)
	want = append(want, make([]byte, 27)...)
	want = append(want, "bob"...)
	want = append(want, make([]byte, 29)...)
	want = append(want, "pw"...)
	if !bytes.Equal(b, want) {
		t.Fatalf("encoding\n want % x\n  got % x", want, b)
	}
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
			if err != nil {
				t.Fatalf("Encode(%v): %v", f, err)
			}
			got, err := ReadFrame(wrap(bytes.NewReader(b)))
			if err != nil {
				t.Fatalf("%s: ReadFrame(%v): %v", name, f, err)
			}
			if got.Type != f.Type || got.Sender != f.Sender || got.Target != f.Target || !bytes.Equal(got.Payload, f.Payload) {
				t.Errorf("%s: round trip\n want %v\n  got %v", name, f, got)
			}
			dec, n, err := Decode(b)
			if err != nil || n != len(b) || dec.Sender != f.Sender || !bytes.Equal(dec.Payload, f.Payload) {
				t.Errorf("Decode(%v) = %v, %d, %v; want the frame, %d, nil", f, dec, n, err, len(b))
			}
		}
	}
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
		if _, err := ReadFrame(bytes.NewReader(c.in)); !errors.Is(err, c.want) {
			t.Errorf("%s: ReadFrame error = %v, want %v", c.name, err, c.want)
		}
	}
}

func TestDecodeIncomplete(t *testing.T) {
	b, _ := Encode(frames()[0])
	for i := 0; i < len(b); i++ {
		if _, n, err := Decode(b[:i]); n != 0 || err != nil {
			t.Fatalf("Decode of %d of %d bytes = %d, %v; want 0, nil (wait for more)", i, len(b), n, err)
		}
	}
	two := append(append([]byte{}, b...), b...)
	if _, n, err := Decode(two); n != len(b) || err != nil {
		t.Fatalf("Decode of two frames used %d bytes (err %v), want %d", n, err, len(b))
	}
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
		if err := WriteFrame(&w, c.f); !errors.Is(err, c.want) {
			t.Errorf("%s: WriteFrame error = %v, want %v", c.name, err, c.want)
		}
		if w.writes != 0 {
			t.Errorf("%s: an invalid frame was written", c.name)
		}
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
		if err := WriteFrame(&w, f); err != nil {
			t.Fatal(err)
		}
		if w.writes != 1 {
			t.Errorf("WriteFrame(%v) made %d writes, want 1", f, w.writes)
		}
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
