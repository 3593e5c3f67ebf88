package grade

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Reading the student's files. Every file the grader reads from the graded
// tree (a checkout, a -root repository, a -course directory) is the
// student's to make: git stores a symbolic link as readily as a file, and a
// link to /dev/zero, to a FIFO or to a file outside the tree, or a regular
// file of gigabytes, would make a plain os.ReadFile read forever, block, or
// read what is not the student's. readTreeFile is the one way the grader
// reads such a file: a regular file (not followed through a link) of at
// most maxTreeFile bytes, or an errTreeFile that says why not, which the
// caller turns into a line of the report.

// maxTreeFile bounds any one file the grader reads from the graded tree.
// The course's largest file is a few hundred KiB; go.sum and course.sum are
// the largest the grader reads whole.
const maxTreeFile = 4 << 20

// errTreeFile is a file of the tree the grader refuses to read.
type errTreeFile struct {
	path string
	why  string
}

func (e *errTreeFile) Error() string { return e.path + " " + e.why }

// isRefused reports whether err is a refusal of readTreeFile's (the file is
// there, but not one the grader reads) rather than a missing file.
func isRefused(err error) bool {
	var r *errTreeFile
	return errors.As(err, &r)
}

// readTreeFile reads the regular file at path, refusing anything else and
// anything larger than maxTreeFile bytes.
func readTreeFile(path string) ([]byte, error) {
	return readTreeFileMax(path, maxTreeFile)
}

func readTreeFileMax(path string, limit int64) ([]byte, error) {
	f, err := openTreeFile(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The size was checked, but the file may grow while it is read.
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &errTreeFile{path, fmt.Sprintf("grew past %d bytes while the grader read it: not read", limit)}
	}
	return b, nil
}

// openTreeFile opens the regular file at path for reading, after the same
// checks as readTreeFile. The file opened must be the one Lstat saw: a link
// put in its place in between is refused.
func openTreeFile(path string, limit int64) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if why := notReadable(fi, limit); why != "" {
		return nil, &errTreeFile{path, why}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if now, err := f.Stat(); err != nil || !os.SameFile(fi, now) {
		f.Close()
		return nil, &errTreeFile{path, "changed while the grader opened it: not read"}
	}
	return f, nil
}

// notReadable says why the grader does not read a file of this kind and
// size ("": it does).
func notReadable(fi fs.FileInfo, limit int64) string {
	m := fi.Mode()
	switch {
	case m&fs.ModeSymlink != 0:
		return "is a symbolic link: the grader reads only regular files of the tree, not what a link points to"
	case !m.IsRegular():
		return fmt.Sprintf("is not a regular file (%s): the grader reads only regular files", m.Type())
	case fi.Size() > limit:
		return fmt.Sprintf("is %d bytes, more than the %d the grader reads of one file", fi.Size(), limit)
	}
	return ""
}

// boundedReadCloser is a file opened by openTreeFile, read no further than
// the bound (for readers that stop early, such as go/build's header scan).
type boundedReadCloser struct {
	io.Reader
	f *os.File
}

func (b boundedReadCloser) Close() error { return b.f.Close() }

// openTreeReader is openTreeFile as an io.ReadCloser bounded to maxTreeFile.
func openTreeReader(path string) (io.ReadCloser, error) {
	f, err := openTreeFile(path, maxTreeFile)
	if err != nil {
		return nil, err
	}
	return boundedReadCloser{io.LimitReader(f, maxTreeFile), f}, nil
}
