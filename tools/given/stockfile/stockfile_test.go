package stockfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	got, err := Parse(strings.NewReader("5 10 1000\n\n3\t2  500\r\n  \n8 0 300"))
	want := []Stock{{5, 10, 1000}, {3, 2, 500}, {8, 0, 300}}
	require.NoError(t, err, "Parse")
	require.Equal(t, want, got, "Parse")
	assert.Equal(t, "5 10 1000\n3 2 500\n8 0 300\n", string(Format(want)), "Format(%v)", want)
}

func TestParseErrorsNameTheLine(t *testing.T) {
	cases := map[string]int{
		"1 2 3\n2 3\n":                   2,
		"1 2 3\n\n2 x 4\n":               3,
		"1 -2 3\n":                       1,
		"+1 2 3\n":                       1,
		"1 2 3 4\n":                      1,
		"1 2 99999999999999999999999\n":  1,
		"1 2 3\n2 3 4\n1 5 6\n":          3,
		"1 2 3\n2 3 4\n3 4 5\n4 5 6 7 8": 4,
	}
	for text, line := range cases {
		_, err := Parse(strings.NewReader(text))
		var le *LineError
		if assert.ErrorAs(t, err, &le, "Parse(%q)", text) {
			assert.Equal(t, line, le.Line, "Parse(%q): the line the error names", text)
		}
		assert.ErrorIs(t, err, ErrInvalid, "Parse(%q)", text)
	}
}

func TestReadMissingFile(t *testing.T) {
	_, err := Read(filepath.Join(t.TempDir(), "stock.txt"))
	assert.ErrorIs(t, err, os.ErrNotExist, "Read of a missing file")
	assert.ErrorContains(t, err, "does not exist", "Read of a missing file")
}

func TestSaveReplacesAtomically(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "stock.txt")
	old := "1 2 3\n2 3 4\n3 4 5\n4 5 6\n"
	require.NoError(t, os.WriteFile(path, []byte(old), 0o644))
	before, _ := os.Stat(path)
	stocks := []Stock{{1, 9, 9}}
	require.NoError(t, Save(path, stocks))
	after, _ := os.Stat(path)
	b, _ := os.ReadFile(path)
	assert.Equal(t, "1 9 9\n", string(b), "after Save (no stale bytes of the longer old file may remain)")
	assert.False(t, os.SameFile(before, after), "Save must rename a new file over the old one")
	assert.Equal(t, fs.FileMode(0o644), after.Mode().Perm(), "Save must keep the file's mode")
	assertOnly(t, dir, "stock.txt")
}

type failingWriter struct{ w io.Writer }

func (f failingWriter) Write(p []byte) (int, error) {
	n, _ := f.w.Write(p[:len(p)/2])
	return n, errors.New("disk full")
}

func TestSaveFailureLeavesOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "stock.txt")
	old := "1 2 3\n"
	require.NoError(t, os.WriteFile(path, []byte(old), 0o644))
	sv := Saver{Intercept: func(w io.Writer) io.Writer { return failingWriter{w} }}
	err := sv.Save(path, []Stock{{1, 9, 9}, {2, 8, 8}})
	require.ErrorContains(t, err, "disk full", "Save with a failing write; want the failure")
	b, _ := os.ReadFile(path)
	assert.Equal(t, old, string(b), "after a failed Save, the old file")
	assertOnly(t, dir, "stock.txt")
}

func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	assert.Equal(t, names, got, "what the folder holds")
}

func TestNumbersStayInTheOriginalsRange(t *testing.T) {
	_, err := Parse(strings.NewReader("1 2147483647 2147483647\n2147483647 0 0\n"))
	assert.NoError(t, err, "the largest C int in every field; want it accepted")
	for _, text := range []string{"1 2147483648 3\n", "2147483648 1 1\n", "1 1 6442450991\n"} {
		var le *LineError
		_, err := Parse(strings.NewReader(text))
		assert.ErrorAs(t, err, &le, "Parse(%q)", text)
		assert.ErrorContains(t, err, "out of range", "Parse(%q) (the original's C int)", text)
	}
}

// recordingFS is the operating system's file system, with every call Save
// makes written down, so that the order of write, fsync and rename shows.
type recordingFS struct {
	calls []string
}

func (r *recordingFS) log(format string, args ...any) {
	r.calls = append(r.calls, fmt.Sprintf(format, args...))
}

func (r *recordingFS) CreateTemp(dir, pattern string) (File, error) {
	f, err := os.CreateTemp(dir, pattern)
	r.log("create")
	return &recordingFile{File: f, fs: r, what: "file"}, err
}

func (r *recordingFS) OpenDir(dir string) (File, error) {
	f, err := os.Open(dir)
	r.log("open dir")
	return &recordingFile{File: f, fs: r, what: "dir"}, err
}

func (r *recordingFS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }

func (r *recordingFS) Rename(oldpath, newpath string) error {
	r.log("rename")
	return os.Rename(oldpath, newpath)
}

func (r *recordingFS) Remove(name string) error {
	r.log("remove")
	return os.Remove(name)
}

type recordingFile struct {
	*os.File
	fs   *recordingFS
	what string
}

func (f *recordingFile) Write(p []byte) (int, error) {
	f.fs.log("write %s", f.what)
	return f.File.Write(p)
}

func (f *recordingFile) Sync() error {
	f.fs.log("sync %s", f.what)
	return f.File.Sync()
}

func (f *recordingFile) Close() error {
	f.fs.log("close %s", f.what)
	return f.File.Close()
}

// TestSaveSyncsBeforeRenameAndAfter checks what no file on disk can show: the
// temporary file is fsynced before the rename (or a crash can leave the new
// name on an empty file), and the folder after it (or the rename itself can be
// lost).
func TestSaveSyncsBeforeRenameAndAfter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stock.txt")
	rec := &recordingFS{}
	require.NoError(t, (Saver{FS: rec}).Save(path, []Stock{{1, 2, 3}}))
	want := []string{"create", "write file", "sync file", "close file", "rename", "open dir", "sync dir", "close dir"}
	assert.Equal(t, want, rec.calls, "Save's file-system calls")
}

func TestCleanTemps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "stock.txt")
	require.NoError(t, os.WriteFile(path, []byte("1 2 3\n"), 0o644))
	// What a kill -9 during a write-back leaves, and files that are not ours.
	for _, name := range []string{".stock.txt.tmp-123", ".stock.txt.tmp-9", ".other.txt.tmp-1", "stock.txt.tmp-1", "notes"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("1 9"), 0o600))
	}
	removed, err := CleanTemps(path, nil)
	assert.NoError(t, err, "CleanTemps")
	assert.Len(t, removed, 2, "CleanTemps: want the two .stock.txt.tmp-* files removed")
	assertOnly(t, dir, ".other.txt.tmp-1", "notes", "stock.txt", "stock.txt.tmp-1")
	b, _ := os.ReadFile(path)
	assert.Equal(t, "1 2 3\n", string(b), "CleanTemps changed the stock file")
}

// FuzzParseFormat: whatever Parse accepts, Format writes back as a file that
// Parse reads as the same stocks (the write-back never loses or changes a
// stock), and Parse never panics.
func FuzzParseFormat(f *testing.F) {
	for _, seed := range []string{"5 10 1000\n3 2 500\n", "1\t2  3\r\n\n  \n", "1 2 3\n1 2 3\n", "2147483647 0 2147483648", "x"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		stocks, err := Parse(strings.NewReader(text))
		if err != nil {
			return
		}
		for _, s := range stocks {
			if s.ID < 0 || s.Count < 0 || s.Price < 0 || s.ID > MaxValue || s.Count > MaxValue || s.Price > MaxValue {
				t.Fatalf("Parse(%q) accepted %v, out of 0..%d", text, s, MaxValue)
			}
		}
		again, err := Parse(strings.NewReader(string(Format(stocks))))
		if err != nil || !slices.Equal(again, stocks) {
			t.Fatalf("Parse(%q) = %v; Format and Parse again = %v, %v", text, stocks, again, err)
		}
	})
}
