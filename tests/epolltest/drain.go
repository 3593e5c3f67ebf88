//go:build linux

package epolltest

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"serverlab/tests/testkit"
	"serverlab/tools/given/lab"
	"serverlab/tools/given/wire"
)

// notImplemented fails the check at once if err says the stub is untouched.
func notImplemented(k *testkit.T, err error, what string) {
	k.Helper()
	if errors.Is(err, lab.ErrNotImplemented) {
		k.Fatalf("%s: %v", what, err)
	}
}

// randomFrames returns n random valid frames and their encoding, one after
// the other. A few payloads are large, so that a frame spans many chunks.
func randomFrames(rng *rand.Rand, n int) ([]wire.Frame, []byte) {
	var frames []wire.Frame
	var stream []byte
	for i := range n {
		size := rng.IntN(100)
		switch rng.IntN(10) {
		case 0:
			size = 0
		case 1:
			size = 1000 + rng.IntN(20000)
		}
		payload := make([]byte, size)
		for j := range payload {
			payload[j] = byte(rng.IntN(256)) // NULs and newlines included: the payload is binary
		}
		f := wire.Frame{
			Type:    wire.Type(2 + rng.IntN(5)),
			Sender:  fmt.Sprintf("user%d", rng.IntN(1000)),
			Target:  strings.Repeat("t", rng.IntN(wire.MaxName+1)),
			Payload: payload,
		}
		if i%7 == 0 {
			f.Sender = strings.Repeat("s", wire.MaxName) // a name that fills its field but for the NUL
		}
		frames = append(frames, f)
		stream, _ = wire.Append(stream, f)
	}
	return frames, stream
}

// cut splits stream at random points: mostly small chunks, some a byte long,
// some large.
func cut(rng *rand.Rand, stream []byte) [][]byte {
	var chunks [][]byte
	for len(stream) > 0 {
		n := 1 + rng.IntN(200)
		switch rng.IntN(8) {
		case 0:
			n = 1
		case 1:
			n = 1 + rng.IntN(30000)
		}
		n = min(n, len(stream))
		chunks = append(chunks, stream[:n])
		stream = stream[n:]
	}
	return chunks
}

// DrainFrames checks exercise 5.1: the select() server's drain_buffer. The
// suite plays the loop: it feeds a stream of random frames cut at random
// points, keeps what DrainFrames leaves, and checks that after every chunk
// exactly the complete frames have come out, in order.
func DrainFrames(t *testing.T, impl Impl) {
	k := testkit.New(t, "5.1")
	var got []wire.Frame
	collect := func(f wire.Frame) bool {
		f.Payload = bytes.Clone(f.Payload) // the payload may alias the buffer
		got = append(got, f)
		return true
	}
	_, err := impl.DrainFrames(nil, collect)
	notImplemented(k, err, "DrainFrames")

	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 5))
		frames, stream := randomFrames(rng, 30)
		ends := frameEnds(frames)
		got = got[:0]
		var pending []byte
		fed := 0
		for i, chunk := range cut(rng, stream) {
			pending = append(pending, chunk...)
			fed += len(chunk)
			used, err := impl.DrainFrames(pending, collect)
			if err != nil {
				k.Fatalf("seed %d, chunk %d: DrainFrames on valid frames returned an error: %v", seed, i, err)
			}
			complete := countLE(ends, fed)
			if len(got) != complete {
				k.Fatalf("seed %d, after chunk %d (%d bytes of the stream fed): %d complete frames have arrived, "+
					"DrainFrames handed over %d in all\nhint: hand over every complete frame in the buffer, not "+
					"just the first (the original event server's bug), and none that is incomplete",
					seed, i, fed, complete, len(got))
			}
			wantUsed := ends0(ends, complete) - (fed - len(pending))
			if used != wantUsed {
				k.Fatalf("seed %d, chunk %d: DrainFrames handed over %d frames; want it to return %d bytes "+
					"(the end of the last one it handed over), got %d", seed, i, len(got), wantUsed, used)
			}
			pending = append([]byte(nil), pending[used:]...)
		}
		for i := range frames {
			if d := testkit.FrameDiff(frames[i], got[i]); d != "" {
				k.Fatalf("seed %d: frame %d decoded wrong (%s)\n  want: %.200v\n   got: %.200v", seed, i, d, frames[i], got[i])
			}
		}
	}
	checkDrainStops(k, impl)
	checkDrainErrors(k, impl)
}

// frameEnds lists the offset in the stream at which each frame ends.
func frameEnds(frames []wire.Frame) []int {
	ends := make([]int, len(frames))
	end := 0
	for i, f := range frames {
		end += wire.HeaderSize + len(f.Payload)
		ends[i] = end
	}
	return ends
}

func countLE(ends []int, n int) int {
	c := 0
	for c < len(ends) && ends[c] <= n {
		c++
	}
	return c
}

// ends0 is the end of the first n frames (0 for none).
func ends0(ends []int, n int) int {
	if n == 0 {
		return 0
	}
	return ends[n-1]
}

// checkDrainStops: when fn returns false (the loop must stop reading from a
// congested client), DrainFrames stops and returns the bytes used so far.
func checkDrainStops(k *testkit.T, impl Impl) {
	k.Helper()
	frames, stream := randomFrames(rand.New(rand.NewPCG(7, 7)), 5)
	calls := 0
	used, err := impl.DrainFrames(stream, func(wire.Frame) bool { calls++; return calls < 2 })
	if err != nil || calls != 2 || used != frameEnds(frames)[1] {
		k.Fatalf("5 whole frames in the buffer, fn returns false on the 2nd: want 2 calls and %d bytes used, "+
			"got %d calls, %d bytes, error %v\nhint: stop as soon as fn returns false; the rest stays in the "+
			"buffer for later", frameEnds(frames)[1], calls, used, err)
	}
}

// checkDrainErrors: an invalid header is an error (the stream cannot be
// resynchronised), after the frames before it have been handed over.
func checkDrainErrors(k *testkit.T, impl Impl) {
	k.Helper()
	good, _ := wire.Encode(wire.Frame{Type: wire.Broadcast, Sender: "alice", Payload: []byte("hi")})
	cases := []struct {
		what string
		bad  []byte
	}{
		{"payload_length = -1", testkit.RawHeader(3, -1, []byte("alice"), nil)},
		{"payload_length = 64 KiB + 1", testkit.RawHeader(3, wire.MaxPayload+1, []byte("alice"), nil)},
		{"an empty sender", testkit.RawHeader(3, 0, []byte(""), nil)},
		{"a sender with no NUL in its 32 bytes", testkit.RawHeader(3, 0, []byte(strings.Repeat("x", wire.NameSize)), nil)},
	}
	for _, c := range cases {
		calls := 0
		in := append(append([]byte(nil), good...), c.bad...)
		used, err := impl.DrainFrames(in, func(wire.Frame) bool { calls++; return true })
		if err == nil {
			k.Fatalf("a good frame, then a header with %s: want an error, got none (%d frames, %d bytes used)\n"+
				"hint: wire.Decode validates the header; pass its error on", c.what, calls, used)
		}
		if calls != 1 || used != len(good) {
			k.Errorf("a good frame, then a header with %s: want the good frame handed over before the error "+
				"and its %d bytes reported used, got %d calls and %d bytes", c.what, len(good), calls, used)
		}
	}
}

// DrainLines checks exercise 5.2: pipelined request lines, all of them, in
// order; a partial line waits; '\r' before '\n' is stripped; a line over
// MaxLine is an error.
func DrainLines(t *testing.T, impl Impl) {
	k := testkit.New(t, "5.2")
	var got []string
	collect := func(line []byte) bool { got = append(got, string(line)); return true }
	_, err := impl.DrainLines(nil, collect)
	notImplemented(k, err, "DrainLines")

	lines := []string{"show", "", "buy 1 2", "sell 3 4\r", "exit", "  \t", "show"}
	want := []string{"show", "", "buy 1 2", "sell 3 4", "exit", "  \t", "show"}
	stream := strings.Join(lines, "\n") + "\n" + "buy 5"
	used, err := impl.DrainLines([]byte(stream), collect)
	if err != nil || strings.Join(got, "|") != strings.Join(want, "|") || used != len(stream)-len("buy 5") {
		k.Fatalf("DrainLines(%q)\n  want lines %q, %d bytes used, no error\n   got lines %q, %d bytes used, error %v\n"+
			"hint: hand over every complete line (the original answered only the first); keep the partial one",
			stream, want, len(stream)-len("buy 5"), got, used, err)
	}

	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 52))
		var all []string
		var b strings.Builder
		for range 200 {
			line := strings.Repeat("x", rng.IntN(40))
			all = append(all, line)
			b.WriteString(line + "\n")
		}
		got = got[:0]
		var pending []byte
		for _, chunk := range cut(rng, []byte(b.String())) {
			pending = append(pending, chunk...)
			used, err := impl.DrainLines(pending, collect)
			if err != nil {
				k.Fatalf("seed %d: DrainLines returned %v on short lines", seed, err)
			}
			if used > 0 && pending[used-1] != '\n' {
				k.Fatalf("seed %d: DrainLines used %d bytes, which do not end at a '\\n': %q", seed, used, pending[:used])
			}
			pending = append([]byte(nil), pending[used:]...)
			if bytes.IndexByte(pending, '\n') >= 0 {
				k.Fatalf("seed %d: DrainLines left a complete line in the buffer: %q", seed, pending)
			}
		}
		if strings.Join(got, "|") != strings.Join(all, "|") {
			k.Fatalf("seed %d: 200 lines fed in random chunks; the lines handed over differ\n  want: %.300q\n   got: %.300q",
				seed, all, got)
		}
	}

	calls := 0
	used, err = impl.DrainLines([]byte("a\nb\nc\n"), func([]byte) bool { calls++; return false })
	if err != nil || calls != 1 || used != 2 {
		k.Fatalf("DrainLines(\"a\\nb\\nc\\n\") with fn returning false: want 1 call and 2 bytes used, got %d calls, "+
			"%d bytes, error %v", calls, used, err)
	}
	partial := bytes.Repeat([]byte("y"), MaxLine-1)
	if used, err := impl.DrainLines(partial, collect); err != nil || used != 0 {
		k.Fatalf("%d bytes without '\\n' (a line that may still end in time): want 0 bytes used and no error, got %d, %v",
			len(partial), used, err)
	}
	if _, err := impl.DrainLines(bytes.Repeat([]byte("y"), MaxLine), collect); err == nil {
		k.Fatalf("exactly %d bytes without '\\n': want an error (the line, with its '\\n', would be over %d bytes), "+
			"got none (off by one at the limit?)", MaxLine, MaxLine)
	}
	exact := append(bytes.Repeat([]byte("z"), MaxLine-1), '\n')
	got = got[:0]
	if used, err := impl.DrainLines(exact, collect); err != nil || used != MaxLine || len(got) != 1 {
		k.Fatalf("a line of exactly %d bytes with its '\\n': want it handed over, %d bytes used; got %d lines, "+
			"%d bytes, error %v", MaxLine, MaxLine, len(got), used, err)
	}
	over := append(bytes.Repeat([]byte("z"), MaxLine), '\n')
	got = got[:0]
	if _, err := impl.DrainLines(over, collect); err == nil || len(got) != 0 {
		k.Fatalf("a line of %d bytes with its '\\n' (%d before it): want an error and no line handed over (a "+
			"line holds at most %d bytes, its '\\n' counted), got %d lines, error %v", MaxLine+1, MaxLine, MaxLine,
			len(got), err)
	}
	overCR := append(bytes.Repeat([]byte("z"), MaxLine-1), '\r', '\n')
	got = got[:0]
	if _, err := impl.DrainLines(overCR, collect); err == nil || len(got) != 0 {
		k.Fatalf("a line of %d bytes ending in \"\\r\\n\": want an error (the '\\r' counts toward the %d bytes), "+
			"got %d lines, error %v", MaxLine+1, MaxLine, len(got), err)
	}
	got = got[:0]
	if _, err := impl.DrainLines([]byte("buy 1 1\r\r\n"), collect); err != nil || len(got) != 1 || got[0] != "buy 1 1\r" {
		k.Fatalf("DrainLines(\"buy 1 1\\r\\r\\n\"): want the line \"buy 1 1\\r\" (one \\r is stripped, not all), "+
			"got %q, error %v", got, err)
	}
	long := bytes.Repeat([]byte("y"), MaxLine+100)
	if _, err := impl.DrainLines(long, collect); err == nil {
		k.Fatalf("%d bytes without '\\n': want an error (a line over %d bytes), got none\n"+
			"hint: without a limit the loop would buffer a client's endless line without end", len(long), MaxLine)
	}
	if _, err := impl.DrainLines(append(long, '\n'), collect); err == nil {
		k.Fatalf("a line of %d bytes: want an error (over %d bytes), got none", len(long)+1, MaxLine)
	}
}
