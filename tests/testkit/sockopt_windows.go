//go:build windows

package testkit

import "syscall"

// SetsockoptInt sets an integer socket option on the descriptor a
// syscall.RawConn's Control hands out. It exists because that descriptor is an
// int on Unix and a syscall.Handle on Windows, and the suites must build on
// both.
func SetsockoptInt(fd uintptr, level, opt, value int) error {
	return syscall.SetsockoptInt(syscall.Handle(fd), level, opt, value)
}
