package testkit

import (
	"encoding/binary"

	"serverlab/tools/given/wire"
)

// Chat protocol v1 builders shared by the discovery, chat and epoll suites:
// the one copy of each.

// RawHeader builds a 72-byte header field by field, for frames that
// tools/given/wire refuses to encode (a negative or oversized length, a name
// without its NUL).
func RawHeader(typ, length int32, sender, target []byte) []byte {
	b := make([]byte, wire.HeaderSize)
	binary.LittleEndian.PutUint32(b[0:4], uint32(typ))
	binary.LittleEndian.PutUint32(b[4:8], uint32(length))
	copy(b[8:40], sender)
	copy(b[40:72], target)
	return b
}

// Encode encodes f with tools/given/wire. It panics on a frame tools/given/wire refuses:
// the suites call it only with frames they build, so that is a test bug.
func Encode(f wire.Frame) []byte {
	b, err := wire.Encode(f)
	if err != nil {
		panic("testkit: test bug: encoding " + f.String() + ": " + err.Error())
	}
	return b
}
