package testkit

import (
	"bufio"
	"errors"
	"io/fs"
	"os"

	"serverlab/tests/judge"
	"serverlab/tools/given/chatcore/proto"
	"serverlab/tools/given/stockfile"
	"serverlab/tools/given/users"
	"serverlab/tools/given/wire"
)

// The given code's errors, known by name in the judge and the subject, so
// that a check's errors.Is against one of them works across processes; and
// the proxies of the given code's interfaces that cross.
func init() {
	for name, err := range map[string]error{
		"wire.ErrLength": wire.ErrLength, "wire.ErrName": wire.ErrName,
		"users.ErrInvalid": users.ErrInvalid, "users.ErrScript": users.ErrScript, "users.ErrReserved": users.ErrReserved,
		"stockfile.ErrInvalid": stockfile.ErrInvalid,
		"proto.ErrTooLarge":    proto.ErrTooLarge, "proto.ErrMalformed": proto.ErrMalformed, "proto.ErrUnknownType": proto.ErrUnknownType,
		"bufio.ErrBufferFull": bufio.ErrBufferFull, "bufio.ErrTooLong": bufio.ErrTooLong, "errors.ErrUnsupported": errors.ErrUnsupported,
	} {
		judge.Sentinel(name, err)
	}
	judge.Proxy(func(o *judge.Object) users.AppendFile { return &appendFileProxy{o} })
	judge.Proxy(func(o *judge.Object) stockfile.FS { return &stockFSProxy{o} })
	judge.Proxy(func(o *judge.Object) stockfile.File { return &stockFileProxy{o} })
}

// appendFileProxy is a users.AppendFile of the other process's.
type appendFileProxy struct{ o *judge.Object }

func (f *appendFileProxy) Write(p []byte) (n int, err error) {
	_ = f.o.Call("Write", []any{p}, &n, &err)
	return n, err
}

func (f *appendFileProxy) Seek(offset int64, whence int) (at int64, err error) {
	_ = f.o.Call("Seek", []any{offset, whence}, &at, &err)
	return at, err
}

func (f *appendFileProxy) Sync() (err error) {
	_ = f.o.Call("Sync", nil, &err)
	return err
}

func (f *appendFileProxy) Truncate(size int64) (err error) {
	_ = f.o.Call("Truncate", []any{size}, &err)
	return err
}

func (f *appendFileProxy) Stat() (fi os.FileInfo, err error) {
	_ = f.o.Call("Stat", nil, &fi, &err)
	return fi, err
}

func (f *appendFileProxy) Name() (name string) {
	_ = f.o.Call("Name", nil, &name)
	return name
}

func (f *appendFileProxy) Close() (err error) {
	_ = f.o.Call("Close", nil, &err)
	return err
}

// stockFSProxy is a stockfile.FS of the other process's.
type stockFSProxy struct{ o *judge.Object }

func (s *stockFSProxy) CreateTemp(dir, pattern string) (f stockfile.File, err error) {
	_ = s.o.Call("CreateTemp", []any{dir, pattern}, &f, &err)
	return f, err
}

func (s *stockFSProxy) OpenDir(dir string) (f stockfile.File, err error) {
	_ = s.o.Call("OpenDir", []any{dir}, &f, &err)
	return f, err
}

func (s *stockFSProxy) Stat(name string) (fi fs.FileInfo, err error) {
	_ = s.o.Call("Stat", []any{name}, &fi, &err)
	return fi, err
}

func (s *stockFSProxy) Rename(oldpath, newpath string) (err error) {
	_ = s.o.Call("Rename", []any{oldpath, newpath}, &err)
	return err
}

func (s *stockFSProxy) Remove(name string) (err error) {
	_ = s.o.Call("Remove", []any{name}, &err)
	return err
}

// stockFileProxy is a stockfile.File of the other process's.
type stockFileProxy struct{ o *judge.Object }

func (f *stockFileProxy) Write(p []byte) (n int, err error) {
	_ = f.o.Call("Write", []any{p}, &n, &err)
	return n, err
}

func (f *stockFileProxy) Name() (name string) {
	_ = f.o.Call("Name", nil, &name)
	return name
}

func (f *stockFileProxy) Chmod(mode fs.FileMode) (err error) {
	_ = f.o.Call("Chmod", []any{mode}, &err)
	return err
}

func (f *stockFileProxy) Sync() (err error) {
	_ = f.o.Call("Sync", nil, &err)
	return err
}

func (f *stockFileProxy) Close() (err error) {
	_ = f.o.Call("Close", nil, &err)
	return err
}
