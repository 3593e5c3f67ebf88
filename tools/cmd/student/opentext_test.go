package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenTrackNamesTheAllowList: the open track hands the design to the
// student, not the choice of calls. A student (round 3) who designed chapter
// 05's listener with unix.Dup passed go test and lost the chapter in make
// grade: the open track's lesson and starter must say that the code may call
// only what the chapter's allow-list names, and how to read it.
func TestOpenTrackNamesTheAllowList(t *testing.T) {
	root, err := filepath.Abs(courseRoot)
	if err != nil {
		t.Fatal(err)
	}
	chs := openChapters(t, root)
	if len(chs) == 0 {
		t.Fatal("no chapter has an open starter")
	}
	for _, ch := range chs {
		want := "make allowed\nCH=" + ch
		lesson, err := os.ReadFile(filepath.Join(root, "chapters", ch, "README.md"))
		if err != nil {
			t.Fatal(err)
		}
		text := string(lesson)
		if i := strings.Index(text, "## Design it yourself"); i < 0 {
			t.Errorf("chapters/%s/README.md has no \"Design it yourself\" section", ch)
		} else if sec, _, _ := strings.Cut(text[i+1:], "\n## "); !strings.Contains(joinLines(sec), joinLines(want)) {
			t.Errorf("chapters/%s/README.md, \"Design it yourself\", does not say that the code may call only what `make allowed CH=%s` lists", ch, ch)
		}
		doc, err := os.ReadFile(filepath.Join(root, "chapters", ch, filepath.FromSlash(openDir), "doc.go"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(joinLines(strings.ReplaceAll(string(doc), "// ", "")), joinLines(want)) {
			t.Errorf("chapters/%s/%sdoc.go does not say that the code may call only what make allowed CH=%s lists", ch, openDir, ch)
		}
	}
}

// joinLines makes a wrapped text one line, so that a phrase is found
// wherever the lines broke.
func joinLines(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "`", "")), " ")
}
