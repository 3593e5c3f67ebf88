//go:build unix

package grade

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"serverlab/tools/internal/coursesum"
)

// hostileTree is a tree whose files are what a student's git repository
// can hold instead of files: links to a device and to a file outside the
// tree, a FIFO, and a sparse regular file of 5 GiB. Each, read whole, would
// run the grader out of memory, block it, or read what is not the student's.
func hostileTree(t *testing.T) (root string, names []string) {
	t.Helper()
	root = t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("open\nnot the student's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mk := map[string]func(string) error{
		"zero":    func(p string) error { return os.Symlink("/dev/zero", p) },
		"outside": func(p string) error { return os.Symlink(outside, p) },
		"fifo":    func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"huge": func(p string) error {
			f, err := os.Create(p)
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(5 << 30) // sparse: no disk
		},
	}
	for name, create := range mk {
		if err := create(filepath.Join(root, name)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		names = append(names, name)
	}
	return root, names
}

// TestReadTreeFileRefuses: every read of the graded tree goes through
// readTreeFile, which reads a regular file of bounded size and refuses
// anything else by saying what it is.
func TestReadTreeFileRefuses(t *testing.T) {
	root, names := hostileTree(t)
	for _, name := range names {
		b, err := readTreeFile(filepath.Join(root, name))
		if !isRefused(err) || b != nil {
			t.Errorf("%s: read %d bytes, err %v; want a refusal", name, len(b), err)
		}
	}
	if _, err := readTreeFile(filepath.Join(root, "absent")); err == nil || isRefused(err) {
		t.Errorf("a missing file: err %v, want not-exist (not a refusal)", err)
	}
	ok := filepath.Join(root, "ok")
	if err := os.WriteFile(ok, []byte("guided\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := readTreeFile(ok); err != nil || string(b) != "guided\n" {
		t.Errorf("a plain file: %q, %v", b, err)
	}
	if rc, err := openTreeReader(filepath.Join(root, "zero")); err == nil {
		rc.Close()
		t.Error("openTreeReader opened a link to /dev/zero")
	}
}

// TestTrackMarkerRefused: a chapter's TRACK that is a link (to /dev/zero,
// to a file outside saying "open") or a huge file is not read: the chapter
// is graded as guided and the report says why (cheater4 a16).
func TestTrackMarkerRefused(t *testing.T) {
	src, names := hostileTree(t)
	root := t.TempDir()
	for _, name := range names {
		dir := filepath.Join(root, "chapters", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(src, name), filepath.Join(dir, TrackFile)); err != nil {
			t.Fatal(err)
		}
		rep := &Report{Chapters: []ChapterResult{{ID: name, Dir: "chapters/" + name}}}
		rep.setTracks(root)
		if rep.Chapters[0].Track != TrackGuided || len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "chapters/"+name+"/TRACK") {
			t.Errorf("TRACK as %s: track %q, notes %q; want guided and a note naming the marker", name, rep.Chapters[0].Track, rep.Notes)
		}
	}
}

// TestPristineRefusesLinkedCourseFile: a course file of the checkout that is
// a link to /dev/zero (cheater4 a17: tests/testkit/main.go) or a huge file is
// not read: it counts as differing, and the course's copy is built in its
// place; a course.sum that is one leaves nothing graded.
func TestPristineRefusesLinkedCourseFile(t *testing.T) {
	src, names := hostileTree(t)
	course := t.TempDir()
	const f = "tests/testkit/main.go"
	good := []byte("package testkit\n")
	for _, d := range []string{course} {
		if err := os.MkdirAll(filepath.Join(d, "tests", "testkit"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(course, f), good, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		root := t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, "tests", "testkit"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(src, name), filepath.Join(root, f)); err != nil {
			t.Fatal(err)
		}
		p := &pristine{mode: course, root: root, tmp: t.TempDir(), files: map[string]string{f: blobID(good)}}
		ov := overlay{Replace: map[string]string{}}
		if msg := p.restore(f, &ov); msg != "" {
			t.Errorf("%s as %s: %s", f, name, msg)
			continue
		}
		if got, want := ov.Replace[filepath.Join(root, f)], filepath.Join(p.tmp, "pristine", f); got != want {
			t.Errorf("%s as %s: overlay %q, want the course's copy %q", f, name, got, want)
		}
		if len(p.notes) != 1 || !strings.Contains(p.notes[0], "the grader reads") {
			t.Errorf("%s as %s: notes %q, want one saying it was not read", f, name, p.notes)
		}
	}

	root := t.TempDir()
	sum := filepath.Join(root, filepath.FromSlash(coursesum.Path))
	if err := os.MkdirAll(filepath.Dir(sum), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", sum); err != nil {
		t.Fatal(err)
	}
	p := newPristine(courseDefault, root, t.TempDir())
	if _, why := p.forChapter("chapters/01"); !strings.Contains(why, "symbolic link") {
		t.Errorf("course.sum -> /dev/zero: chapter graded (%q), want refused", why)
	}
}
