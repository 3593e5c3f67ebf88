package judge

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing/iotest"
)

// ReadPattern is how a DataReader hands out its bytes: the reader of
// testing/iotest it reads through.
type ReadPattern string

// The patterns a DataReader knows.
const (
	WholeReads   ReadPattern = "whole"         // each Read returns all it is asked for that is left
	OneByteReads ReadPattern = "one byte"      // iotest.OneByteReader
	HalfReads    ReadPattern = "half"          // iotest.HalfReader
	DataErrReads ReadPattern = "data with EOF" // iotest.DataErrReader: the last data comes with io.EOF
)

// wrap is the reader of the pattern around r, or nil for a pattern this
// build does not know.
func (how ReadPattern) wrap(r io.Reader) io.Reader {
	switch how {
	case WholeReads:
		return r
	case OneByteReads:
		return iotest.OneByteReader(r)
	case HalfReads:
		return iotest.HalfReader(r)
	case DataErrReads:
		return iotest.DataErrReader(r)
	}
	return nil
}

// DataReader returns a reader of data that hands it out in the pattern
// how: what the suite gets from iotest's readers around a bytes.Reader, and
// nothing else (it has no method but Read, so the code under test cannot
// take a short cut through io.WriterTo or Len).
//
// Why it exists: under tools/cmd/grade a reader the judge passes to the
// subject stays in the judge, and each of the subject's Reads crosses the
// socket and back. A frame of 64 KiB read one byte per Read was 65,536
// round trips, about 14 CPU-seconds of exercise 1.1's 16. A DataReader is
// only data and a pattern, so it crosses whole instead, and the subject
// reads its own copy through the same iotest reader: every Read returns
// what it returned at home, at the cost of a function call.
//
// A DataReader crosses once, before it is read: afterwards its bytes are
// the other process's, and a Read here, or a second crossing, fails with
// an error that says so (a suite that needs that reads through
// bytes.NewReader, whose Reads cross one by one).
func DataReader(data []byte, how ReadPattern) io.Reader {
	if how.wrap(bytes.NewReader(nil)) == nil {
		panic(fmt.Sprintf("judge.DataReader: unknown pattern %q", how))
	}
	return &dataReader{data: data, how: how}
}

// errDataReaderMoved is what a DataReader says once it belongs to the
// other process.
var errDataReaderMoved = errors.New("judge: this DataReader was handed to the other process: its bytes are read there (a suite that needs them here reads through bytes.NewReader)")

type dataReader struct {
	mu    sync.Mutex
	data  []byte
	how   ReadPattern
	r     io.Reader // made at the first Read here
	moved bool      // sent to the other process
}

func (d *dataReader) Read(p []byte) (int, error) {
	d.mu.Lock()
	if d.moved {
		d.mu.Unlock()
		return 0, errDataReaderMoved
	}
	if d.r == nil {
		d.r = d.how.wrap(bytes.NewReader(d.data))
	}
	r := d.r
	d.mu.Unlock()
	return r.Read(p)
}

// take hands the reader's data and pattern to the encoder, once, before
// any Read here.
func (d *dataReader) take() ([]byte, ReadPattern, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.moved:
		return nil, "", errors.New("judge: a DataReader crosses to the other process once")
	case d.r != nil:
		return nil, "", errors.New("judge: a DataReader crosses to the other process before it is read, not after")
	}
	d.moved = true
	return bytes.Clone(d.data), d.how, nil
}

// dataReaderFrom is the other process's DataReader rebuilt here.
func dataReaderFrom(data []byte, how string) (io.Reader, error) {
	if ReadPattern(how).wrap(bytes.NewReader(nil)) == nil {
		return nil, fmt.Errorf("a DataReader with an unknown pattern %q (are both processes built from the same course?)", how)
	}
	return &dataReader{data: data, how: ReadPattern(how)}, nil
}
