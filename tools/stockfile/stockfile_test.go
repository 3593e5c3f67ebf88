package stockfile

import (
	"errors"
	"io"
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
