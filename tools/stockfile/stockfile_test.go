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
)

func TestParse(t *testing.T) {
	got, err := Parse(strings.NewReader("5 10 1000\n\n3\t2  500\r\n  \n8 0 300"))
	want := []Stock{{5, 10, 1000}, {3, 2, 500}, {8, 0, 300}}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("Parse = %v, %v; want %v, nil", got, err, want)
	}
	if text := string(Format(want)); text != "5 10 1000\n3 2 500\n8 0 300\n" {
		t.Errorf("Format(%v) = %q", want, text)
	}
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
		if !errors.As(err, &le) || le.Line != line || !errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%q) = %v; want a *LineError for line %d wrapping ErrInvalid", text, err, line)
		}
	}
}

func TestReadMissingFile(t *testing.T) {
	_, err := Read(filepath.Join(t.TempDir(), "stock.txt"))
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("Read of a missing file: %v", err)
	}
}

func TestSaveReplacesAtomically(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "stock.txt")
	old := "1 2 3\n2 3 4\n3 4 5\n4 5 6\n"
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(path)
	stocks := []Stock{{1, 9, 9}}
	if err := Save(path, stocks); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(path)
	if b, _ := os.ReadFile(path); string(b) != "1 9 9\n" {
		t.Errorf("after Save: %q (no stale bytes of the longer old file may remain)", b)
	}
	if os.SameFile(before, after) || after.Mode().Perm() != 0o644 {
		t.Errorf("Save must rename a new file over the old one and keep its mode: same=%v mode=%v",
			os.SameFile(before, after), after.Mode())
	}
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
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	sv := Saver{Intercept: func(w io.Writer) io.Writer { return failingWriter{w} }}
	err := sv.Save(path, []Stock{{1, 9, 9}, {2, 8, 8}})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Save with a failing write = %v; want the failure", err)
	}
	if b, _ := os.ReadFile(path); string(b) != old {
		t.Errorf("after a failed Save: %q, want the old %q", b, old)
	}
	assertOnly(t, dir, "stock.txt")
}

func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if !slices.Equal(got, names) {
		t.Errorf("folder holds %q, want %q", got, names)
	}
}

func TestNumbersStayInTheOriginalsRange(t *testing.T) {
	if _, err := Parse(strings.NewReader("1 2147483647 2147483647\n2147483647 0 0\n")); err != nil {
		t.Errorf("the largest C int in every field: %v; want it accepted", err)
	}
	for _, text := range []string{"1 2147483648 3\n", "2147483648 1 1\n", "1 1 6442450991\n"} {
		var le *LineError
		if _, err := Parse(strings.NewReader(text)); !errors.As(err, &le) || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("Parse(%q) = %v; want a *LineError saying out of range (the original's C int)", text, err)
		}
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
	if err := (Saver{FS: rec}).Save(path, []Stock{{1, 2, 3}}); err != nil {
		t.Fatal(err)
	}
	want := []string{"create", "write file", "sync file", "close file", "rename", "open dir", "sync dir", "close dir"}
	if !slices.Equal(rec.calls, want) {
		t.Errorf("Save's file-system calls:\n   got %q\n  want %q", rec.calls, want)
	}
}

func TestCleanTemps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "stock.txt")
	if err := os.WriteFile(path, []byte("1 2 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// What a kill -9 during a write-back leaves, and files that are not ours.
	for _, name := range []string{".stock.txt.tmp-123", ".stock.txt.tmp-9", ".other.txt.tmp-1", "stock.txt.tmp-1", "notes"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("1 9"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := CleanTemps(path, nil)
	if err != nil || len(removed) != 2 {
		t.Errorf("CleanTemps = %q, %v; want the two .stock.txt.tmp-* files", removed, err)
	}
	assertOnly(t, dir, ".other.txt.tmp-1", "notes", "stock.txt", "stock.txt.tmp-1")
	if b, _ := os.ReadFile(path); string(b) != "1 2 3\n" {
		t.Errorf("CleanTemps changed the stock file: %q", b)
	}
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
