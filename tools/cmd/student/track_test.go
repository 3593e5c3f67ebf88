package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// openFixture is the fixture course with an open track for chapter 01: a
// given file the open track keeps (keep.go), one it removes (extra.go) and
// the open starter's server (open.go).
func openFixture(t *testing.T) string {
	t.Helper()
	root := fixture(t, solvedOne)
	for name, content := range map[string]string{
		"chapters/01/keep.go":                     "package ex\n\n// kept\n",
		".starter/chapters/01/keep.go":            "package ex\n\n// kept\n",
		"chapters/01/extra.go":                    "package ex\n\n// a helper of the student's\n",
		"chapters/01/testdata/open/KEEP":          "# kept from the guided starter\nkeep.go\n",
		"chapters/01/testdata/open/open.go":       "package ex\n\n// the open starter\n",
		".starter/chapters/01/testdata/open/KEEP": "keep.go\n",
	} {
		if err := writeFile(filepath.Join(root, filepath.FromSlash(name)), []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestResetOpenAndGuided(t *testing.T) {
	root := openFixture(t)
	ch := filepath.Join(root, "chapters", "01")
	out, _, err := student(t, root, "reset", "-ch", "1", "-mode", "open")
	if err != nil {
		t.Fatalf("reset -mode open: %v\n%s", err, out)
	}
	mustContain(t, "reset -mode open", out, "chapters/01/ex.go: removed", "chapters/01/open.go: the open track's",
		"kept keep.go", "your files are saved in .backup/")
	for name, want := range map[string]bool{"ex.go": false, "extra.go": false, "keep.go": true, "open.go": true, "ex_test.go": true} {
		if got := fileExists(filepath.Join(ch, name)); got != want {
			t.Errorf("after reset -mode open, chapters/01/%s exists = %v, want %v", name, got, want)
		}
	}
	if b, err := os.ReadFile(filepath.Join(ch, trackFile)); err != nil || !strings.HasPrefix(string(b), "open\n") {
		t.Errorf("after reset -mode open, %s = %q, %v; want it to start with open", trackFile, b, err)
	}
	c, _ := openCourse(root)
	if got := c.currentTrack("01"); got != trackOpen {
		t.Errorf("currentTrack after reset -mode open = %q, want open", got)
	}
	backups, _ := filepath.Glob(filepath.Join(root, ".backup", "*-ch01-open", "chapters", "01", "ex.go"))
	if len(backups) != 1 {
		t.Errorf("the student's ex.go is not in the backup: %v", backups)
	} else if b, _ := os.ReadFile(backups[0]); string(b) != solvedOne {
		t.Errorf("backed-up ex.go differs from the student's")
	}

	// An exercise's stubs cannot be restored on the open track.
	if _, _, err := student(t, root, "reset", "1.1"); err == nil || !strings.Contains(err.Error(), "open track") {
		t.Errorf("reset 1.1 on the open track: err = %v; want one saying the chapter is on the open track", err)
	}

	out, _, err = student(t, root, "reset", "-ch", "01", "-mode", "guided")
	if err != nil {
		t.Fatalf("reset -mode guided: %v\n%s", err, out)
	}
	mustContain(t, "reset -mode guided", out, "chapters/01/open.go: removed", "chapters/01/ex.go: the guided starter's", "guided track")
	if b, err := os.ReadFile(filepath.Join(ch, "ex.go")); err != nil || string(b) != stubGo {
		t.Errorf("after reset -mode guided, ex.go is not the starter's: %v", err)
	}
	for name, want := range map[string]bool{"open.go": false, "keep.go": true, trackFile: false} {
		if got := fileExists(filepath.Join(ch, name)); got != want {
			t.Errorf("after reset -mode guided, chapters/01/%s exists = %v, want %v", name, got, want)
		}
	}
}

func TestResetModeMistakes(t *testing.T) {
	root := fixture(t, stubGo)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-ch", "01", "-mode", "open"}, "chapter 01 has no open track"},
		{[]string{"-ch", "01", "-mode", "free"}, "unknown MODE \"free\""},
		{[]string{"-ch", "01", "-mode", "open", "1.1"}, "a whole chapter, no EX"},
		{[]string{"-ch", "", "-mode", "open"}, "unknown chapter"},
	} {
		if _, _, err := student(t, root, append([]string{"reset"}, tc.args...)...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("reset %v: err = %v; want one containing %q", tc.args, err, tc.want)
		}
	}
}

// The grader reads the marker this tool writes: the two names must agree.
func TestTrackFileIsTheGraders(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(courseRoot, "tools", "internal", "grade", "track.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`TrackFile = "` + trackFile + `"`, `TrackOpen   = "` + trackOpen + `"`} {
		if !strings.Contains(string(src), want) {
			t.Errorf("tools/internal/grade/track.go lacks %s: the grader would not see the track reset writes", want)
		}
	}
}
