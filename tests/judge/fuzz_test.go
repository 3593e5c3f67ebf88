//go:build linux

package judge

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/gob"
	"io"
	"io/fs"
	"reflect"
	"testing"
	"time"
)

// receiveTypes are the types the fuzzed values are decoded as: every kind
// the decoder handles and every codec that does not need a descriptor.
var receiveTypes = []reflect.Type{
	reflect.TypeFor[int](), reflect.TypeFor[string](), reflect.TypeFor[[]byte](), reflect.TypeFor[[]string](),
	reflect.TypeFor[map[string][]int](), reflect.TypeFor[*int](), reflect.TypeFor[[4]uint16](),
	reflect.TypeFor[struct {
		A bool
		B []float64
	}](), reflect.TypeFor[error](), reflect.TypeFor[io.Reader](), reflect.TypeFor[func(int) int](),
	reflect.TypeFor[time.Time](), reflect.TypeFor[fs.FileInfo](), reflect.TypeFor[*tls.Config](),
	reflect.TypeFor[context.Context](), reflect.TypeFor[testImpl](),
}

// FuzzReceive feeds the judge's receiving end what a hostile subject could
// send: every stream must be decoded, or refused with an error, without a
// panic, a crash or an allocation beyond the message bounds.
func FuzzReceive(f *testing.F) {
	for _, m := range []*message{
		{Call: 1, Method: "leaks", Args: []value{{Uint: 7}}},
		{Call: 2, Reply: true, Args: []value{{Str: "none"}, {Elems: []value{{Int: 1}, {Elems: []value{{Str: "x"}}}}}}},
		{Call: 3, Reply: true, Args: []value{{Err: &errValue{ID: "s1", Text: "boom", Is: []string{"io.EOF"}, Timeout: true}}}},
		{Call: 4, Handle: 9, Method: "Accept", Args: []value{{Handle: 3, Methods: []string{"Read"}}, {Kind: "ctx", Uint: 5}}},
	} {
		var buf bytes.Buffer
		enc := gob.NewEncoder(&buf)
		if err := enc.Encode(flatten(m)); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, stream []byte) {
		p := newPeer(&link{}, "j")
		dec := gob.NewDecoder(&frameLimit{r: bytes.NewReader(stream), max: maxMessage})
		for range 8 {
			var w wireMessage
			if err := dec.Decode(&w); err != nil {
				return
			}
			m, err := unflatten(&w)
			if err != nil {
				continue
			}
			// What the subject's calls bring in is counted and bounded
			// (inbound.go) before any of it is served.
			if !p.admit(m) && p.inBytes <= maxCallsIn && valueBytesOf(m) <= maxCallIn {
				t.Fatalf("a call of %d bytes refused under the bounds", valueBytesOf(m))
			}
			d := decoder{p: p}
			for _, x := range m.Args {
				for _, typ := range receiveTypes {
					_, _ = d.decode(x, typ)
				}
			}
		}
	})
}

// TestReceiveBounds: a message past maxMessage is refused from its length
// alone, and values nested past maxDepth, shared or out of order are
// refused, not followed.
func TestReceiveBounds(t *testing.T) {
	huge := []byte{0xfc, 0x7f, 0xff, 0xff, 0xff} // a count of 2 GiB - 1, in gob's encoding
	if _, err := io.ReadAll(&frameLimit{r: bytes.NewReader(huge), max: maxMessage}); err == nil {
		t.Error("a 2 GiB message length was let through")
	}
	deep := value{}
	for range maxDepth + 1 {
		deep = value{Elems: []value{deep}}
	}
	if _, err := unflatten(flatten(&message{Args: []value{deep}})); err == nil {
		t.Errorf("a value nested %d deep was accepted (at most %d)", maxDepth+1, maxDepth)
	}
	shared := &wireMessage{Args: []int32{0}, Values: []wireValue{{Elems: []int32{1, 1}}, {}}}
	if _, err := unflatten(shared); err == nil {
		t.Error("a value that is two elements at once was accepted")
	}
	cycle := &wireMessage{Args: []int32{0}, Values: []wireValue{{Elems: []int32{0}}}}
	if _, err := unflatten(cycle); err == nil {
		t.Error("a value that is its own element was accepted")
	}
	ok := &message{Call: 1, Args: []value{{Elems: []value{{Int: 1}, {Elems: []value{{Str: "x"}}}}}}}
	back, err := unflatten(flatten(ok))
	if err != nil || !reflect.DeepEqual(back, ok) {
		t.Errorf("flatten/unflatten round trip = %+v, %v; want %+v", back, err, ok)
	}
}

func valueBytesOf(m *message) int {
	n := len(m.Method)
	for i := range m.Args {
		n += valueBytes(&m.Args[i])
	}
	return n
}
