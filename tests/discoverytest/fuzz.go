package discoverytest

import (
	"bytes"
	"errors"
	"testing"

	"serverlab/tests/testkit"
	"serverlab/tools/given/lab"
	"serverlab/tools/given/wire"
)

// FuzzReadFrame is the fuzz target of the chapter's codec: on any input,
// ReadFrame agrees with tools/given/wire (the same frame, or the same kind of
// error), and a frame it reads, written back with WriteFrame, is what
// tools/given/wire encodes for it. A chapter wires it in with
//
//	func FuzzReadFrame(f *testing.F) { discoverytest.FuzzReadFrame(f, impl) }
func FuzzReadFrame(f *testing.F, impl Impl) {
	for _, fr := range sampleFrames() {
		if len(fr.Payload) < 1024 {
			f.Add(testkit.Encode(fr))
		}
	}
	f.Add(testkit.RawHeader(3, -1, []byte("bob"), nil))
	f.Add(testkit.RawHeader(3, 10, []byte("bob"), []byte("abcdefghijklmnopqrstuvwxyz0123456")))
	f.Fuzz(func(t *testing.T, in []byte) {
		got, gotErr := impl.ReadFrame(bytes.NewReader(in))
		if errors.Is(gotErr, lab.ErrNotImplemented) {
			t.Skip("ReadFrame is not implemented yet (exercise 1.1)")
		}
		want, wantErr := wire.ReadFrame(bytes.NewReader(in))
		if errKind(wantErr) != errKind(gotErr) || (wantErr == nil && testkit.FrameDiff(want, got) != "") {
			t.Fatalf("ReadFrame and tools/given/wire disagree:\n  input: % x\n  want: %v (err %v)\n   got: %v (err %v)",
				truncate(in, 80), brief(want), wantErr, brief(got), gotErr)
		}
		if gotErr != nil {
			return
		}
		var out bytes.Buffer
		err := impl.WriteFrame(&out, got)
		if errors.Is(err, lab.ErrNotImplemented) {
			return
		}
		if err != nil || !bytes.Equal(out.Bytes(), testkit.Encode(want)) {
			t.Fatalf("WriteFrame(ReadFrame(input)) is not what tools/given/wire encodes:\n  frame: %v\n  want: % x\n   got: % x (err %v)",
				brief(got), truncate(testkit.Encode(want), 80), truncate(out.Bytes(), 80), err)
		}
	})
}
