package testkit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The judge and the subject share the check's scratch folder: the subject's
// code writes its users file, its database, its stock file there, and the
// judge reads and writes the same files to check them. The judge runs outside
// the subject's sandbox, with rights the subject has not (as root's grader it
// runs as nobody, in the non-root flow as the instructor), so a path the
// subject can change must never lead the judge out of that folder: a users.txt
// that the subject replaced with a symbolic link to the instructor's token, or
// to the reference solution, would otherwise be read by the judge and printed
// in the failure's "got:" line, and an append would write through it.
//
// So every file access a suite makes in a scratch folder goes through the
// functions below, which resolve the path inside the folder with an os.Root
// opened when the folder was made (before the subject knew its name): no
// symbolic link and no ".." can leave it, and renaming or replacing the folder
// itself does not move the root. A path outside every scratch folder of a
// running check is refused, so a suite cannot fall back to following links by
// accident. go test ./tests/testkit (TestSuitesUseScratchFiles) holds every
// suite to this.

// scratch maps each live scratch folder (a cleaned absolute path) to its root.
var scratch struct {
	sync.Mutex
	roots map[string]*os.Root
}

// TempDir returns a new scratch folder for tb's check, like tb.TempDir, whose
// files the functions of this file reach through an os.Root. Suites call it
// (or k.TempDir) for every folder they share with the subject.
func TempDir(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		tb.Fatalf("test bug: opening the scratch folder %s: %v", dir, err)
	}
	key := filepath.Clean(dir)
	scratch.Lock()
	if scratch.roots == nil {
		scratch.roots = make(map[string]*os.Root)
	}
	scratch.roots[key] = root
	scratch.Unlock()
	// Registered after tb.TempDir's removal, so it runs before it.
	tb.Cleanup(func() {
		scratch.Lock()
		delete(scratch.roots, key)
		scratch.Unlock()
		root.Close()
	})
	return dir
}

// TempDir shadows testing.T's: the folder is a scratch folder (see the
// package-level TempDir), so that the check can reach its files safely.
func (k *T) TempDir() string {
	k.Helper()
	return TempDir(k.T)
}

// ErrNotScratch is returned for a path that is in no live scratch folder.
var ErrNotScratch = errors.New("not in a scratch folder of a running check (testkit.TempDir)")

// resolve returns the root of the scratch folder holding path and path's name
// relative to it.
func resolve(op, path string) (*os.Root, string, error) {
	if !filepath.IsAbs(path) {
		return nil, "", &fs.PathError{Op: op, Path: path, Err: ErrNotScratch}
	}
	clean := filepath.Clean(path)
	scratch.Lock()
	defer scratch.Unlock()
	for dir := clean; ; dir = filepath.Dir(dir) {
		if root, ok := scratch.roots[dir]; ok {
			rel, err := filepath.Rel(dir, clean)
			if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				break
			}
			return root, rel, nil
		}
		if parent := filepath.Dir(dir); parent == dir {
			break
		}
	}
	return nil, "", &fs.PathError{Op: op, Path: path, Err: ErrNotScratch}
}

// ReadFile is os.ReadFile confined to the scratch folder holding path.
func ReadFile(path string) ([]byte, error) {
	root, name, err := resolve("readfile", path)
	if err != nil {
		return nil, err
	}
	return root.ReadFile(name)
}

// WriteFile is os.WriteFile confined to the scratch folder holding path.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	root, name, err := resolve("writefile", path)
	if err != nil {
		return err
	}
	return root.WriteFile(name, data, perm)
}

// OpenFile is os.OpenFile confined to the scratch folder holding path.
func OpenFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	root, name, err := resolve("open", path)
	if err != nil {
		return nil, err
	}
	return root.OpenFile(name, flag, perm)
}

// Open is os.Open confined to the scratch folder holding path.
func Open(path string) (*os.File, error) { return OpenFile(path, os.O_RDONLY, 0) }

// Create is os.Create confined to the scratch folder holding path.
func Create(path string) (*os.File, error) {
	return OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

// AppendFile appends data to the file at path (creating it with perm), as
// one write, confined to the scratch folder holding path.
func AppendFile(path string, data []byte, perm fs.FileMode) error {
	f, err := OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}

// Stat is os.Stat confined to the scratch folder holding path.
func Stat(path string) (fs.FileInfo, error) {
	root, name, err := resolve("stat", path)
	if err != nil {
		return nil, err
	}
	return root.Stat(name)
}

// Lstat is os.Lstat confined to the scratch folder holding path.
func Lstat(path string) (fs.FileInfo, error) {
	root, name, err := resolve("lstat", path)
	if err != nil {
		return nil, err
	}
	return root.Lstat(name)
}

// ReadDir is os.ReadDir confined to the scratch folder holding path: the
// entries sorted by name, as os.ReadDir sorts them.
func ReadDir(path string) ([]fs.DirEntry, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}

// Readlink is os.Readlink confined to the scratch folder holding path: the
// link's text is returned, never followed.
func Readlink(path string) (string, error) {
	root, name, err := resolve("readlink", path)
	if err != nil {
		return "", err
	}
	return root.Readlink(name)
}

// Remove is os.Remove confined to the scratch folder holding path.
func Remove(path string) error {
	root, name, err := resolve("remove", path)
	if err != nil {
		return err
	}
	return root.Remove(name)
}

// RemoveAll is os.RemoveAll confined to the scratch folder holding path.
func RemoveAll(path string) error {
	root, name, err := resolve("removeall", path)
	if err != nil {
		return err
	}
	return root.RemoveAll(name)
}

// Mkdir is os.Mkdir confined to the scratch folder holding path.
func Mkdir(path string, perm fs.FileMode) error {
	root, name, err := resolve("mkdir", path)
	if err != nil {
		return err
	}
	return root.Mkdir(name, perm)
}

// MkdirAll is os.MkdirAll confined to the scratch folder holding path.
func MkdirAll(path string, perm fs.FileMode) error {
	root, name, err := resolve("mkdir", path)
	if err != nil {
		return err
	}
	return root.MkdirAll(name, perm)
}

// Chmod is os.Chmod confined to the scratch folder holding path.
func Chmod(path string, mode fs.FileMode) error {
	root, name, err := resolve("chmod", path)
	if err != nil {
		return err
	}
	return root.Chmod(name, mode)
}

// Truncate is os.Truncate confined to the scratch folder holding path.
func Truncate(path string, size int64) error {
	f, err := OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	return errors.Join(f.Truncate(size), f.Close())
}

// Rename is os.Rename; both paths must be in the same scratch folder.
func Rename(oldpath, newpath string) error {
	root, oldname, newname, err := resolvePair("rename", oldpath, newpath)
	if err != nil {
		return err
	}
	return root.Rename(oldname, newname)
}

// Link is os.Link; both paths must be in the same scratch folder.
func Link(oldpath, newpath string) error {
	root, oldname, newname, err := resolvePair("link", oldpath, newpath)
	if err != nil {
		return err
	}
	return root.Link(oldname, newname)
}

// Symlink is os.Symlink with the link at newpath, in a scratch folder. The
// link's text (target) is not checked: whatever it names, the functions of
// this file will not follow it out of the folder.
func Symlink(target, newpath string) error {
	root, name, err := resolve("symlink", newpath)
	if err != nil {
		return err
	}
	return root.Symlink(target, name)
}

func resolvePair(op, oldpath, newpath string) (*os.Root, string, string, error) {
	root, oldname, err := resolve(op, oldpath)
	if err != nil {
		return nil, "", "", err
	}
	root2, newname, err := resolve(op, newpath)
	if err != nil {
		return nil, "", "", err
	}
	if root != root2 {
		return nil, "", "", &os.LinkError{Op: op, Old: oldpath, New: newpath,
			Err: fmt.Errorf("the two paths are in different scratch folders")}
	}
	return root, oldname, newname, nil
}
