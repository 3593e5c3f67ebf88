//go:build unix

package filelock

import (
	"errors"
	"os"
	"syscall"
)

// lock takes flock(2)'s exclusive lock without waiting. flock is separate
// from the POSIX locks SQLite takes, so readers of the store (a suite, the
// sqlite3 shell) are not disturbed.
func lock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return ErrInUse
	}
	return err
}
