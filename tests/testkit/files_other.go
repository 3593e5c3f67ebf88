//go:build !unix

package testkit

import (
	"errors"
	"io/fs"
)

// Mkfifo fails: there are no named pipes in the file system here.
func Mkfifo(path string, perm fs.FileMode) error { return errors.ErrUnsupported }
