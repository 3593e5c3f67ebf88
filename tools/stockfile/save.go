package stockfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Saver writes stock files atomically. The zero value is ready to use;
// Intercept exists so that tests can make a write fail halfway.
type Saver struct {
	// Intercept, if set, wraps the writer of the temporary file: whatever it
	// returns receives the file's bytes. A test returns a writer that fails
	// after a few bytes to check that a failed write leaves the old file alone.
	Intercept func(io.Writer) io.Writer
}

// Save writes stocks to path with the zero Saver.
func Save(path string, stocks []Stock) error { return Saver{}.Save(path, stocks) }

// Save replaces the file at path with stocks, in the given order, so that a
// crash at any moment leaves either the old file or the new one, never a mix:
//
//  1. write a temporary file in the same folder (rename is atomic only within
//     one file system, and the folder is surely on the same one);
//  2. fsync it, so its bytes are on disk before its name is;
//  3. rename it over path: readers see the old file or the new one;
//  4. fsync the folder, so the rename itself survives a crash.
//
// On any error the temporary file is removed and the old file is untouched.
// (The original rewrote stock.txt in place without truncating it: a shorter
// tree left stale bytes at the end, and a crash mid-write left half a file.)
func (sv Saver) Save(path string, stocks []Stock) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("saving %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			err = fmt.Errorf("saving %s: %w", path, err)
		}
	}()
	if st, err := os.Stat(path); err == nil {
		// Keep the old file's permissions (CreateTemp makes 0600).
		if err := tmp.Chmod(st.Mode().Perm()); err != nil {
			return err
		}
	}
	var w io.Writer = tmp
	if sv.Intercept != nil {
		w = sv.Intercept(tmp)
	}
	if _, err := w.Write(Format(stocks)); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
