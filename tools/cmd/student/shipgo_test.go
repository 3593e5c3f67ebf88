package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestReleaseStripsMirrorMarks: the mirror's //mirror:keep marks (and the
// empty comment line before each) are not in the starters a student gets;
// everything else of the file is.
func TestReleaseStripsMirrorMarks(t *testing.T) {
	const marked = "package discovery\n\n// Open is the open track's own.\n//\n//mirror:keep the open track's own: its design is the student's\nfunc Open() int { return 0 }\n"
	const shipped = "package discovery\n\n// Open is the open track's own.\nfunc Open() int { return 0 }\n"
	if got := string(shippedGo([]byte(marked))); got != shipped {
		t.Errorf("shippedGo:\n%s\nwant:\n%s", got, shipped)
	}
	root := fixture(t, stubGo)
	if err := writeFile(filepath.Join(root, "chapters/01/testdata/open/x.go"), []byte(marked)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := student(t, root, "release", "-o", "dist/s.tar.gz"); err != nil {
		t.Fatalf("release: %v", err)
	}
	for _, name := range []string{"chapters/01/testdata/open/x.go"} {
		got := tarFile(t, filepath.Join(root, "dist/s.tar.gz"), name)
		if strings.Contains(got, maintainersMark) || !strings.Contains(got, "func Open() int") {
			t.Errorf("the release's %s:\n%s\nwant it without %s, and the rest kept", name, got, maintainersMark)
		}
	}
}
