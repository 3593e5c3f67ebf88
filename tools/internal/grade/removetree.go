package grade

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// removeTree removes dir and everything in it, as the user who owns it: a
// folder the subject made r-x (chmod 0555) cannot be emptied by RemoveAll
// as that same user (cheater5 J: 100 MiB left on the disk by each grading),
// so where RemoveAll fails, every folder is first made the owner's to
// write again, from the top down, and RemoveAll tried once more.
func removeTree(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	var chmodDown func(string)
	chmodDown = func(d string) {
		if err := os.Chmod(d, 0o700); err != nil {
			return
		}
		entries, err := os.ReadDir(d)
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.Type()&fs.ModeType == fs.ModeDir {
				chmodDown(filepath.Join(d, e.Name()))
			}
		}
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return errors.Join(err, os.RemoveAll(dir))
	}
	chmodDown(dir)
	return os.RemoveAll(dir)
}
