//go:build unix

package judge

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// readTrace reads r to its end with Reads of size, and says what each
// returned: what the code under test sees of a reader.
func readTrace(r io.Reader, size int) string {
	var b strings.Builder
	buf := make([]byte, size)
	for range 10_000 {
		n, err := r.Read(buf)
		fmt.Fprintf(&b, "%d %q %v;", n, buf[:n], err)
		if err != nil {
			break
		}
	}
	return b.String()
}

// cross sends r as an io.Reader from one peer and receives it at another,
// as a call's argument crosses from the judge to the subject.
func cross(t *testing.T, r io.Reader) (io.Reader, error) {
	t.Helper()
	home, away := newPeer(nil, "j"), newPeer(nil, "s")
	readerType := reflect.TypeFor[io.Reader]()
	x, err := (&encoder{p: home}).encode(reflect.ValueOf(&r).Elem(), readerType)
	if err != nil {
		return nil, err
	}
	v, err := (&decoder{p: away}).decode(x, readerType)
	if err != nil {
		t.Fatalf("decode a DataReader: %v", err)
	}
	return v.Interface().(io.Reader), nil
}

// A DataReader that crossed reads, Read by Read, as iotest's reader of its
// pattern reads at home, and offers nothing but Read.
func TestDataReaderCrossesWhole(t *testing.T) {
	data := []byte(strings.Repeat("frame-bytes!", 50))
	wraps := map[ReadPattern]func(io.Reader) io.Reader{
		WholeReads:   func(r io.Reader) io.Reader { return r },
		OneByteReads: iotest.OneByteReader,
		HalfReads:    iotest.HalfReader,
		DataErrReads: iotest.DataErrReader,
	}
	for how, wrap := range wraps {
		for _, size := range []int{1, 7, 72, 4096} {
			want := readTrace(wrap(bytes.NewReader(data)), size)
			if got := readTrace(DataReader(data, how), size); got != want {
				t.Errorf("%s, Reads of %d, at home:\n got %.200s\nwant %.200s", how, size, got, want)
			}
			r, err := cross(t, DataReader(data, how))
			if err != nil {
				t.Fatalf("%s: encode: %v", how, err)
			}
			if got := readTrace(r, size); got != want {
				t.Errorf("%s, Reads of %d, after crossing:\n got %.200s\nwant %.200s", how, size, got, want)
			}
			if _, ok := r.(io.WriterTo); ok {
				t.Errorf("%s: the crossed reader is an io.WriterTo: the code under test could skip the pattern", how)
			}
			if _, ok := r.(io.ByteReader); ok {
				t.Errorf("%s: the crossed reader is an io.ByteReader", how)
			}
		}
	}
}

// A DataReader's bytes are the other process's once it crossed: it
// crosses once, before any Read at home, and a Read at home then fails.
func TestDataReaderCrossesOnce(t *testing.T) {
	r := DataReader([]byte("abc"), OneByteReads)
	if _, err := cross(t, r); err != nil {
		t.Fatalf("first crossing: %v", err)
	}
	if _, err := r.Read(make([]byte, 1)); !errors.Is(err, errDataReaderMoved) {
		t.Errorf("Read at home after crossing: %v, want %v", err, errDataReaderMoved)
	}
	if _, err := cross(t, r); err == nil {
		t.Error("a DataReader crossed twice: its two copies would each read the same bytes")
	}
	read := DataReader([]byte("abc"), OneByteReads)
	if _, err := read.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := cross(t, read); err == nil {
		t.Error("a DataReader crossed after a Read at home: the other copy would read its first byte again")
	}
	if _, err := dataReaderFrom(nil, "two bytes"); err == nil {
		t.Error("a DataReader with a pattern this build does not know was rebuilt")
	}
}
