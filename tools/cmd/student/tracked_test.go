package main

import (
	"bytes"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// maxTracked is the largest file the course may hold outside docs/'s images:
// anything bigger is build or load-test output, which a tool can make again.
const maxTracked = 1 << 20

// executableMagic are the first bytes of the executables Go builds: ELF
// (Linux, BSD), Mach-O (macOS, 32 and 64 bit, either byte order, and
// universal binaries) and PE (Windows, whose files start with the MZ stub).
var executableMagic = map[string][]byte{
	"an ELF executable":            {0x7f, 'E', 'L', 'F'},
	"a Mach-O executable":          {0xfe, 0xed, 0xfa, 0xce},
	"a Mach-O executable (64-bit)": {0xfe, 0xed, 0xfa, 0xcf},
	"a Mach-O executable (LE)":     {0xce, 0xfa, 0xed, 0xfe},
	"a Mach-O executable (64, LE)": {0xcf, 0xfa, 0xed, 0xfe},
	"a universal Mach-O binary":    {0xca, 0xfe, 0xba, 0xbe},
	"a PE (Windows) executable":    {'M', 'Z'},
}

// executableKind names the executable format b starts with, or "".
func executableKind(b []byte) string {
	for kind, magic := range executableMagic {
		if bytes.HasPrefix(b, magic) {
			return kind
		}
	}
	return ""
}

// docsImage says whether a file is one of docs/'s images (the experiments'
// plots), the only files that may be large.
func docsImage(rel string) bool {
	switch path.Ext(rel) {
	case ".png", ".svg", ".jpg", ".jpeg", ".gif":
		return strings.HasPrefix(rel, "docs/")
	}
	return false
}

// TestNothingGeneratedIsTracked fails on any file of the course (git's
// tracked files, or in a tree without git every file .gitignore leaves in:
// what make student-release ships) that is a compiled executable, or that is
// over 1 MiB outside docs/'s images. Build output belongs to the tool that
// makes it: `go build ./tools/cmd/grade` writes ./grade, which .gitignore keeps
// out.
func TestNothingGeneratedIsTracked(t *testing.T) {
	root, err := filepath.Abs(courseRoot)
	if err != nil {
		t.Fatal(err)
	}
	c := &course{root: root}
	files, from, err := c.sourceFiles()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 100 {
		t.Fatalf("found %d course files from %s: not the course", len(files), from)
	}
	for _, rel := range files {
		abs := filepath.Join(root, filepath.FromSlash(rel))
		fi, err := os.Stat(abs)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		if fi.Size() > maxTracked && !docsImage(rel) {
			t.Errorf("%s is %d bytes (from %s): over 1 MiB, only docs/'s images may be; if a tool makes it, leave it to the tool and .gitignore it", rel, fi.Size(), from)
		}
		if kind := executableKind(head(t, abs, 4)); kind != "" {
			t.Errorf("%s is %s (from %s): build output is never committed; remove it (git rm --cached %s) and let .gitignore keep it out", rel, kind, from, rel)
		}
	}
}

// head returns up to n first bytes of a file.
func head(t *testing.T, file string, n int) []byte {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, n)
	k, err := io.ReadFull(f, b)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		t.Fatal(err)
	}
	return b[:k]
}

func TestExecutableKind(t *testing.T) {
	for _, tc := range []struct {
		head []byte
		want bool
	}{
		{[]byte("\x7fELF\x02\x01"), true},
		{[]byte{0xcf, 0xfa, 0xed, 0xfe, 7}, true},
		{[]byte("MZ\x90\x00"), true},
		{[]byte("package main\n"), false},
		{[]byte("#!/bin/sh\n"), false},
		{[]byte("\x89PNG"), false},
		{nil, false},
	} {
		if got := executableKind(tc.head) != ""; got != tc.want {
			t.Errorf("executableKind(%q) = %q; want an executable: %v", tc.head, executableKind(tc.head), tc.want)
		}
	}
}

// TestGitignoreKeepsOutEveryCommand fails when `go build ./tools/<command>`
// at the root would write a binary that .gitignore does not keep out: every
// main package under tools/ needs its "/<name>" line.
func TestGitignoreKeepsOutEveryCommand(t *testing.T) {
	root, err := filepath.Abs(courseRoot)
	if err != nil {
		t.Fatal(err)
	}
	ignore := readIgnore(filepath.Join(root, ".gitignore"))
	commands := 0
	err = filepath.WalkDir(filepath.Join(root, "tools"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			return filepath.SkipDir
		}
		if !isMainPackage(t, p) {
			return nil
		}
		commands++
		bin := filepath.Base(p) // what go build names the binary
		rel, _ := filepath.Rel(root, p)
		for _, name := range []string{bin, bin + ".exe"} {
			if !ignore.match(name, false) {
				t.Errorf("%s is a command, but .gitignore does not keep out /%s, which `go build ./%s` writes at the root: add the line /%s",
					filepath.ToSlash(rel), name, filepath.ToSlash(rel), bin)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if commands == 0 {
		t.Fatal("found no command under tools/: the walk is broken")
	}
}

// isMainPackage says whether the folder's non-test Go files are package main.
func isMainPackage(t *testing.T, dir string) bool {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), n, nil, parser.PackageClauseOnly)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		return f.Name.Name == "main"
	}
	return false
}
