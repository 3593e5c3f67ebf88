package stockfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// Saver writes stock files atomically. The zero value is ready to use;
// Intercept and FS exist so that tests can make a write fail halfway and see
// the order of the file-system calls.
type Saver struct {
	// Intercept, if set, wraps the writer of the temporary file: whatever it
	// returns receives the file's bytes. A test returns a writer that fails
	// after a few bytes to check that a failed write leaves the old file alone.
	Intercept func(io.Writer) io.Writer
	// FS, if set, is the file system Save works through (default: the
	// operating system's, OS). Whether a file is fsynced before it is renamed,
	// and its folder after, cannot be seen in the files afterwards; a test
	// passes an FS that records the calls to check their order.
	FS FS
}

// FS is what Save needs of a file system.
type FS interface {
	// CreateTemp creates a new file in dir, as os.CreateTemp does.
	CreateTemp(dir, pattern string) (File, error)
	// OpenDir opens the folder dir, to fsync it.
	OpenDir(dir string) (File, error)
	Stat(name string) (fs.FileInfo, error)
	Rename(oldpath, newpath string) error
	Remove(name string) error
}

// File is what Save needs of an open file (an *os.File has all of it).
type File interface {
	io.Writer
	Name() string
	Chmod(fs.FileMode) error
	Sync() error
	Close() error
}

// OS is the operating system's file system, Save's default.
var OS FS = osFS{}

type osFS struct{}

func (osFS) CreateTemp(dir, pattern string) (File, error) { return os.CreateTemp(dir, pattern) }
func (osFS) OpenDir(dir string) (File, error)             { return os.Open(dir) }
func (osFS) Stat(name string) (fs.FileInfo, error)        { return os.Stat(name) }
func (osFS) Rename(oldpath, newpath string) error         { return os.Rename(oldpath, newpath) }
func (osFS) Remove(name string) error                     { return os.Remove(name) }

// Save writes stocks to path with the zero Saver.
func Save(path string, stocks []Stock) error { return Saver{}.Save(path, stocks) }

// tempPattern is the name of Save's temporary files for a stock file called
// base: hidden, and recognisable by CleanTemps after a crash.
func tempPattern(base string) string { return "." + base + ".tmp-*" }

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
// A crash (kill -9, power loss) between 1 and 3 leaves the temporary file
// behind: CleanTemps removes it at the next start.
func (sv Saver) Save(path string, stocks []Stock) (err error) {
	fsys := sv.FS
	if fsys == nil {
		fsys = OS
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := fsys.CreateTemp(dir, tempPattern(base))
	if err != nil {
		return fmt.Errorf("saving %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			fsys.Remove(tmp.Name())
			err = fmt.Errorf("saving %s: %w", path, err)
		}
	}()
	if st, err := fsys.Stat(path); err == nil {
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
	if err := fsys.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(fsys, dir)
}

// syncDir makes a rename in dir durable.
func syncDir(fsys FS, dir string) error {
	d, err := fsys.OpenDir(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// CleanTemps removes the temporary files that Save left next to the stock
// file at path when the process died in the middle of a write-back (kill -9
// between the temporary file's creation and its rename). They hold a stock
// list that was never committed, so nothing is lost; left alone they would
// pile up, one per crash. Each removal is logged (log may be nil). A server
// calls it once at start-up, before it serves: no Save of its own can be
// running then. It returns the names it removed.
func CleanTemps(path string, log *slog.Logger) ([]string, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	prefix := strings.TrimSuffix(tempPattern(base), "*")
	var removed []string
	var errs []error
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) || !e.Type().IsRegular() {
			continue
		}
		name := filepath.Join(dir, e.Name())
		if err := os.Remove(name); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, name)
		if log != nil {
			log.Warn("removed a temporary stock file left by an interrupted write-back", "file", name)
		}
	}
	return removed, errors.Join(errs...)
}
