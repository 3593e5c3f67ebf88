package testkit

import (
	"bytes"
	"fmt"

	"serverlab/tools/given/wire"
)

// Chat protocol v1 helpers (tools/given/wire), shared by the discovery and chat
// suites.

// SendFrame encodes f with tools/given/wire and writes it in one write.
func (c *Conn) SendFrame(f wire.Frame) {
	c.k.Helper()
	b, err := wire.Encode(f)
	if err != nil {
		c.k.Fatalf("test bug: cannot encode %v: %v", f, err)
	}
	c.Write(b, "frame "+f.String())
}

// TryReadFrame reads one frame with tools/given/wire, with a deadline per read.
func (c *Conn) TryReadFrame() (wire.Frame, error) {
	return wire.ReadFrame(c.Reader())
}

// ReadFrame reads one frame or fails the check.
func (c *Conn) ReadFrame() wire.Frame {
	c.k.Helper()
	f, err := c.TryReadFrame()
	if err != nil {
		c.k.Fatalf("want a frame, got %s%s", Describe(err), c.Context())
	}
	return f
}

// ExpectFrame reads one frame and checks that it equals want.
func (c *Conn) ExpectFrame(want wire.Frame) wire.Frame {
	c.k.Helper()
	got, err := c.TryReadFrame()
	if err != nil {
		c.k.Fatalf("want frame %v, got %s%s", want, Describe(err), c.Context())
	}
	if diff := FrameDiff(want, got); diff != "" {
		c.k.Fatalf("wrong frame (%s)\n  want: %v\n   got: %v%s", diff, want, got, c.Context())
	}
	return got
}

// FrameDiff names the fields in which got differs from want, or returns "".
func FrameDiff(want, got wire.Frame) string {
	var d []string
	if want.Type != got.Type {
		d = append(d, "type")
	}
	if want.Sender != got.Sender {
		d = append(d, "sender")
	}
	if want.Target != got.Target {
		d = append(d, "target")
	}
	if !bytes.Equal(want.Payload, got.Payload) {
		d = append(d, "payload")
	}
	if len(d) == 0 {
		return ""
	}
	return fmt.Sprintf("%v differ", d)
}
