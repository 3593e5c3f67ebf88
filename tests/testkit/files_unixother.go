//go:build unix && !linux

package testkit

import (
	"io/fs"
	"path/filepath"
	"syscall"
)

// Mkfifo makes a named pipe at path, in a scratch folder (see TempDir). Here
// (macOS, the BSDs) there is no mkfifoat to make it relative to a folder
// opened through the root, so the folder is checked through the root and the
// pipe made by path. That leaves a moment in which the folder could be
// swapped; it matters only where a subject runs apart from its judge, which
// is tools/cmd/grade's sandbox, and that is Linux's (files_linux.go).
func Mkfifo(path string, perm fs.FileMode) error {
	root, name, err := resolve("mkfifo", path)
	if err != nil {
		return err
	}
	dir, err := root.Open(filepath.Dir(name))
	if err != nil {
		return err
	}
	dir.Close()
	if err := syscall.Mkfifo(path, uint32(perm.Perm())); err != nil {
		return &fs.PathError{Op: "mkfifo", Path: path, Err: err}
	}
	return nil
}
