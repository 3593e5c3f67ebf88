// Package filelock takes the exclusive lock that keeps a second server off a
// store another one is using: chapter 07's SQLite database, chapter 08's
// embedded NATS store. Two servers on one store would each keep their own
// caches (of users, channels, session owners) and hand out the same names
// twice; the store's own locks protect its pages, not those caches.
package filelock

import (
	"errors"
	"fmt"
	"os"
)

// ErrInUse is the error of Open when another process holds the lock.
var ErrInUse = errors.New("in use by another server")

// Open opens (or creates) the file at path and locks it for as long as the
// returned file is open — a process that dies, kill -9 too, lets it go. It
// fails at once, with an error wrapping ErrInUse, if another process holds
// it. Where the system has no such lock (see lock_other.go) the file is
// opened without one: run one server per store there.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := lock(f); err != nil {
		f.Close()
		if errors.Is(err, ErrInUse) {
			return nil, fmt.Errorf("%s is %w", path, ErrInUse)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}
