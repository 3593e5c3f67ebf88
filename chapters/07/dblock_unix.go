//go:build unix

package chatcore

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockDB takes an exclusive lock on the database file for as long as the
// returned file is open, or fails at once if another process holds it. Two
// servers on one database would each keep their own caches of users and
// channels and hand out the same names twice; SQLite's own locks protect its
// pages, not those caches. flock is separate from the POSIX locks SQLite
// takes, so readers (the suite, the sqlite3 shell) are not disturbed.
func lockDB(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s is in use by another server", path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}
