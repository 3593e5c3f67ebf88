//go:build linux

package testkit

import (
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Mkfifo makes a named pipe at path, in a scratch folder (see TempDir): the
// folder it goes in is opened through the folder's root and the pipe made
// relative to it (mkfifoat), so no symbolic link leads it elsewhere.
func Mkfifo(path string, perm fs.FileMode) error {
	root, name, err := resolve("mkfifo", path)
	if err != nil {
		return err
	}
	dir, err := root.Open(filepath.Dir(name))
	if err != nil {
		return err
	}
	defer dir.Close()
	if err := unix.Mkfifoat(int(dir.Fd()), filepath.Base(name), uint32(perm.Perm())); err != nil {
		return &fs.PathError{Op: "mkfifo", Path: path, Err: err}
	}
	return nil
}
