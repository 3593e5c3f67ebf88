package main

import (
	"os"
	"path/filepath"
)

// writeAtomic replaces the file at path with data, whole or not at all: it
// writes a temporary file beside it and renames it over the old one, so
// that a generator stopped half-way (an error, ^C, a full disk) leaves the
// old file, never a truncated one. The file keeps its permission bits
// (0o644 for a new one).
//
// Every generator of the maintainers' room that rewrites a course file in
// place (make chapters, the open starters, the stubs) writes through it;
// tools/maint/rooms' TestGeneratorsWriteWholeFiles holds them to that.
func writeAtomic(path string, data []byte) error {
	mode := os.FileMode(0o644)
	if info, err := os.Stat(path); err == nil {
		mode = info.Mode().Perm()
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op once renamed
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp, mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
