package discoverytest

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"serverlab/tests/judge"
	"serverlab/tests/testkit"
	"serverlab/tools/given/lab"
	"serverlab/tools/given/wire"
)

// sampleFrames are valid frames that exercise every field's edge cases.
func sampleFrames() []wire.Frame {
	name31 := strings.Repeat("n", wire.MaxName)
	return []wire.Frame{
		{Type: wire.Registration, Sender: "alice", Payload: []byte("secret")},
		{Type: wire.Broadcast, Sender: "bob", Target: "ALL", Payload: []byte("hello, world")},
		{Type: wire.QueryUser, Sender: "carol"}, // empty payload
		{Type: wire.PrivateMsg, Sender: name31, Target: name31, Payload: []byte("31-byte names")},
		{Type: wire.Broadcast, Sender: "dave", Payload: []byte{0, 1, 2, 0, 255, '\n'}}, // binary payload
		{Type: wire.Broadcast, Sender: "erin", Payload: bytes.Repeat([]byte("x"), wire.MaxPayload)},
		{Type: 99, Sender: "frank", Target: "x"}, // unknown types are the server's business, not the codec's
	}
}

// stopIfNotImplemented ends the check with a clear message while the
// exercise is still a stub.
func stopIfNotImplemented(k *testkit.T, err error, what string) {
	k.Helper()
	if errors.Is(err, lab.ErrNotImplemented) {
		k.Fatalf("%s is not implemented yet: %v", what, err)
	}
}

// ReadFrame checks exercise 1.1: reading one frame from a byte stream.
func ReadFrame(t *testing.T, impl Impl) {
	k := testkit.New(t, "1.1")
	_, err := impl.ReadFrame(bytes.NewReader(testkit.Encode(sampleFrames()[0])))
	stopIfNotImplemented(k, err, "ReadFrame")

	// The patterns are testing/iotest's readers; judge.DataReader crosses to
	// the subject whole, so that one byte per Read of a 64 KiB frame is not
	// 65,536 round trips under the grader. "one Read" stays a plain reader,
	// whose Reads cross one by one, as any other reader's do.
	readers := map[string]func([]byte) io.Reader{
		"one Read":                  func(b []byte) io.Reader { return bytes.NewReader(b) },
		"one byte per Read":         func(b []byte) io.Reader { return judge.DataReader(b, judge.OneByteReads) },
		"half the buffer per Read":  func(b []byte) io.Reader { return judge.DataReader(b, judge.HalfReads) },
		"data together with io.EOF": func(b []byte) io.Reader { return judge.DataReader(b, judge.DataErrReads) },
	}
	for how, reader := range readers {
		for _, want := range sampleFrames() {
			got, err := impl.ReadFrame(reader(testkit.Encode(want)))
			if err != nil {
				k.Errorf("reading %s (%s): unexpected error %v", brief(want), how, err)
				continue
			}
			if diff := testkit.FrameDiff(want, got); diff != "" {
				k.Errorf("reading %s (%s): %s\n  want: %v\n   got: %v", brief(want), how, diff, brief(want), brief(got))
			}
		}
	}

	checkBackToBack(k, impl)
	checkReadErrors(k, impl)
	checkNoHugeAllocation(k, impl)
	checkAgreesWithWire(k, impl)
	checkRandomFrames(k, impl)
	checkNotDelegatedRead(k, impl)
}

// randomFrame draws a valid frame: any type, names of 1 to 31 bytes of any
// value but NUL (the target may be empty), a payload of 0 to 64 KiB.
func randomFrame(rng *rand.Rand) wire.Frame {
	name := func(minLen int) string {
		b := make([]byte, minLen+rng.IntN(wire.MaxName+1-minLen))
		for i := range b {
			b[i] = byte(1 + rng.IntN(255))
		}
		return string(b)
	}
	size := rng.IntN(64)
	if rng.IntN(4) == 0 {
		size = rng.IntN(wire.MaxPayload + 1)
	}
	p := make([]byte, size)
	for i := range p {
		p[i] = byte(rng.Uint32())
	}
	return wire.Frame{Type: wire.Type(int32(rng.Uint32())), Sender: name(1), Target: name(0), Payload: p}
}

// checkRandomFrames: frames drawn afresh on every run (they cannot be
// memorised) come out of ReadFrame as tools/given/wire encoded them.
func checkRandomFrames(k *testkit.T, impl Impl) {
	k.Helper()
	rng := k.Rand()
	for range 200 {
		want := randomFrame(rng)
		got, err := impl.ReadFrame(judge.DataReader(testkit.Encode(want), judge.HalfReads))
		if err != nil || testkit.FrameDiff(want, got) != "" {
			k.Fatalf("reading a frame encoded by tools/given/wire:\n  sent: % x\n  want: %v\n   got: %v (err %v)",
				truncate(testkit.Encode(want), 80), brief(want), brief(got), err)
		}
	}
}

// brief shortens a frame with a long payload for messages.
func brief(f wire.Frame) wire.Frame {
	if len(f.Payload) > 40 {
		f.Payload = append(f.Payload[:20:20], []byte("…")...)
	}
	return f
}

// checkBackToBack: two frames in one stream must come out as two frames; a
// reader that reads "whatever is there" swallows the second.
func checkBackToBack(k *testkit.T, impl Impl) {
	k.Helper()
	a, b := sampleFrames()[1], sampleFrames()[0]
	r := bytes.NewReader(append(testkit.Encode(a), testkit.Encode(b)...))
	for i, want := range []wire.Frame{a, b} {
		got, err := impl.ReadFrame(r)
		if err != nil || testkit.FrameDiff(want, got) != "" {
			k.Fatalf("two frames sent back to back: frame %d\n  want: %v\n   got: %v (err %v)\n"+
				"hint: read exactly 72 header bytes, then exactly payload_length bytes (io.ReadFull)", i+1, want, got, err)
		}
	}
	if _, err := impl.ReadFrame(r); !errors.Is(err, io.EOF) {
		k.Errorf("after the last frame: want io.EOF, got %v", err)
	}
}

func checkReadErrors(k *testkit.T, impl Impl) {
	k.Helper()
	full := testkit.Encode(sampleFrames()[1])
	cases := []struct {
		name  string
		input []byte
		want  error
	}{
		{"an empty stream", nil, io.EOF},
		{"half a header", full[:wire.HeaderSize/2], io.ErrUnexpectedEOF},
		{"a header and half the payload", full[:wire.HeaderSize+3], io.ErrUnexpectedEOF},
		{"a header promising a payload that never comes", testkit.RawHeader(3, 10, []byte("bob"), nil), io.ErrUnexpectedEOF},
		{"payload_length = -1", testkit.RawHeader(3, -1, []byte("bob"), nil), wire.ErrLength},
		{"payload_length = 64 KiB + 1", testkit.RawHeader(3, wire.MaxPayload+1, []byte("bob"), nil), wire.ErrLength},
		{"payload_length = 1<<30", testkit.RawHeader(3, 1<<30, []byte("bob"), nil), wire.ErrLength},
		{"a 32-byte sender with no NUL", testkit.RawHeader(3, 0, bytes.Repeat([]byte("s"), 32), nil), wire.ErrName},
		{"a 32-byte target with no NUL", testkit.RawHeader(4, 0, []byte("bob"), bytes.Repeat([]byte("t"), 32)), wire.ErrName},
		{"an empty sender", testkit.RawHeader(3, 0, nil, nil), wire.ErrName},
	}
	for _, c := range cases {
		_, err := impl.ReadFrame(bytes.NewReader(c.input))
		if !errors.Is(err, c.want) {
			k.Errorf("reading %s:\n  sent: % x\n  want: an error wrapping %q\n   got: %v",
				c.name, truncate(c.input, 16), c.want, err)
		}
	}
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// checkNoHugeAllocation: a header that claims 1 GiB must be refused before
// anything is allocated for it.
func checkNoHugeAllocation(k *testkit.T, impl Impl) {
	k.Helper()
	hdr := testkit.RawHeader(3, 1<<30, []byte("bob"), nil)
	var before, after runtime.MemStats
	testkit.ReadMemStats(&before)
	impl.ReadFrame(bytes.NewReader(hdr))
	testkit.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		k.Errorf("reading a header with payload_length = 1<<30 allocated %d bytes: check the length before you allocate", grew)
	}
}

// checkAgreesWithWire feeds the same damaged streams to the student's codec
// and to tools/given/wire: both must return the same frame, or the same kind of error.
func checkAgreesWithWire(k *testkit.T, impl Impl) {
	k.Helper()
	rng := k.Rand()
	frames := sampleFrames()[:5]
	for i := range 300 {
		b := testkit.Encode(frames[i%len(frames)])
		for range 1 + rng.IntN(2) { // damage the header: any byte, or the type and length
			if rng.IntN(2) == 0 {
				b[rng.IntN(wire.HeaderSize)] = byte(rng.Uint32())
			} else {
				b[rng.IntN(8)] = byte(rng.Uint32())
			}
		}
		if rng.IntN(3) == 0 { // and sometimes cut the stream short
			b = b[:rng.IntN(len(b)+1)]
		}
		want, wantErr := wire.ReadFrame(bytes.NewReader(b))
		got, gotErr := impl.ReadFrame(bytes.NewReader(b))
		if errKind(wantErr) != errKind(gotErr) || (wantErr == nil && testkit.FrameDiff(want, got) != "") {
			k.Fatalf("your ReadFrame and tools/given/wire disagree on this input:\n  sent: % x\n  want: %v (err %v)\n   got: %v (err %v)",
				truncate(b, 80), brief(want), wantErr, brief(got), gotErr)
		}
	}
}

// errKind names the protocol error an error wraps. A header that is wrong in
// two ways may be reported for either, so length and name errors are one kind.
func errKind(err error) string {
	if errors.Is(err, wire.ErrLength) || errors.Is(err, wire.ErrName) {
		return "invalid header"
	}
	for _, e := range []error{io.ErrUnexpectedEOF, io.EOF} {
		if errors.Is(err, e) {
			return e.Error()
		}
	}
	if err != nil {
		return "other error: " + err.Error()
	}
	return "ok"
}

// countingWriter counts Write calls.
type countingWriter struct {
	bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

// WriteFrame checks exercise 1.2: encoding a frame in one write.
func WriteFrame(t *testing.T, impl Impl) {
	k := testkit.New(t, "1.2")
	stopIfNotImplemented(k, impl.WriteFrame(io.Discard, sampleFrames()[0]), "WriteFrame")

	for _, f := range sampleFrames() {
		var w countingWriter
		if err := impl.WriteFrame(&w, f); err != nil {
			k.Errorf("writing %v: unexpected error %v", brief(f), err)
			continue
		}
		want := testkit.Encode(f)
		if !bytes.Equal(w.Bytes(), want) {
			k.Errorf("writing %v: wrong bytes\n  want: % x\n   got: % x\n"+
				"hint: type and length little-endian; each name NUL-padded to 32 bytes",
				brief(f), truncate(want, 80), truncate(w.Bytes(), 80))
		}
		if w.writes != 1 {
			k.Errorf("writing %v took %d Write calls, want 1: build the whole frame in one buffer "+
				"(two writes stall on Nagle's algorithm and can interleave with other writers)", brief(f), w.writes)
		}
	}

	rng := k.Rand()
	for range 200 {
		f := randomFrame(rng)
		var w countingWriter
		if err := impl.WriteFrame(&w, f); err != nil || !bytes.Equal(w.Bytes(), testkit.Encode(f)) {
			k.Fatalf("writing %v (a frame drawn at random): want the bytes tools/given/wire writes\n  want: % x\n   got: % x (err %v)",
				brief(f), truncate(testkit.Encode(f), 80), truncate(w.Bytes(), 80), err)
		}
	}
	checkNotDelegatedWrite(k, impl)

	long := strings.Repeat("x", wire.NameSize)
	bad := []struct {
		name string
		f    wire.Frame
		want error
	}{
		{"a 32-byte sender", wire.Frame{Type: 3, Sender: long}, wire.ErrName},
		{"a 32-byte target", wire.Frame{Type: 4, Sender: "bob", Target: long}, wire.ErrName},
		{"an empty sender", wire.Frame{Type: 3}, wire.ErrName},
		{"a 32-byte sender of multi-byte characters", wire.Frame{Type: 3, Sender: strings.Repeat("é", 16)}, wire.ErrName},
		{"a target containing NUL", wire.Frame{Type: 4, Sender: "bob", Target: "a\x00"}, wire.ErrName},
		{"a sender containing NUL", wire.Frame{Type: 3, Sender: "bo\x00b"}, wire.ErrName},
		{"a payload of 64 KiB + 1", wire.Frame{Type: 3, Sender: "bob", Payload: make([]byte, wire.MaxPayload+1)}, wire.ErrLength},
	}
	for _, c := range bad {
		var w countingWriter
		err := impl.WriteFrame(&w, c.f)
		if !errors.Is(err, c.want) {
			k.Errorf("writing a frame with %s: want an error wrapping %q, got %v", c.name, c.want, err)
		}
		if w.Len() != 0 {
			k.Errorf("writing a frame with %s: wrote %d bytes; an invalid frame must write nothing", c.name, w.Len())
		}
	}
}
