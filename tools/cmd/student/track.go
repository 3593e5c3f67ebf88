package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The tracks. On the guided track a chapter's starter has a stub for every
// exercise, each with its contract. On the open track (chapters 03 on) the
// starter keeps only what the suite's wiring and the chapter's program need
// (the types, the constructor, the given store or codec) and an empty
// server: the design is the student's, and the same suites grade it.
// `make reset CH=NN MODE=open` switches a chapter, MODE=guided switches it
// back; the grader reports which track each chapter was done in, from the
// marker file the open reset writes.
const (
	trackGuided = "guided"
	trackOpen   = "open"
	// trackFile is the marker in the chapter's folder (tools/cmd/grade reads
	// it: keep the two in step).
	trackFile = "TRACK"
	// openDir, inside a chapter, holds its open starter: the Go files that
	// replace the guided ones, and KEEP, the guided files that stay.
	openDir = "testdata/open"
)

// resetTrack puts chapter chArg on the track mode names, backing up every
// file it changes or removes.
func (c *course) resetTrack(w io.Writer, chArg, mode string) error {
	ch, err := c.findChapter(chArg)
	if err != nil {
		return err
	}
	switch mode {
	case trackOpen:
		return c.resetOpen(w, ch.ID)
	case trackGuided:
		return c.resetGuided(w, ch.ID)
	}
	return usagef("unknown MODE %q: open (design the server yourself) or guided (the starter's stubs)", mode)
}

// currentTrack is the chapter's track, from its marker.
func (c *course) currentTrack(ch string) string {
	b, err := os.ReadFile(filepath.Join(c.root, chapterDir(ch), trackFile))
	if err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 && f[0] == trackOpen {
			return trackOpen
		}
	}
	return trackGuided
}

// resetOpen replaces the chapter's Go files (not its tests, not its
// commands) with its open starter, keeping the files KEEP lists.
func (c *course) resetOpen(w io.Writer, ch string) error {
	dir := filepath.Join(c.root, chapterDir(ch))
	open := filepath.Join(dir, filepath.FromSlash(openDir))
	keep, err := readKeep(filepath.Join(open, "KEEP"))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("chapter %s has no open track (%s/%s is missing); chapters %s have one", ch, chapterDir(ch), openDir, c.openChapters())
	}
	if err != nil {
		return err
	}
	starter, err := goFilesIn(open)
	if err != nil {
		return err
	}
	mine, err := goFilesIn(dir)
	if err != nil {
		return err
	}
	// Every check before the first file changes: a refusal half-way would
	// leave the chapter neither guided nor open, and not compiling.
	for _, name := range keep {
		if !fileExists(filepath.Join(dir, name)) {
			return fmt.Errorf("%s/%s, which the open track keeps, is missing: make reset CH=%s MODE=guided restores the chapter, then try again", chapterDir(ch), name, ch)
		}
	}
	b := c.newBackup("ch" + ch + "-open")
	for _, name := range mine {
		if slices.Contains(keep, name) {
			continue
		}
		if err := b.remove(filepath.Join(dir, name)); err != nil {
			return err
		}
		if !slices.Contains(starter, name) {
			fmt.Fprintf(w, "%s/%s: removed\n", chapterDir(ch), name)
		}
	}
	for _, name := range starter {
		src, err := os.ReadFile(filepath.Join(open, name))
		if err != nil {
			return err
		}
		if err := writeFile(filepath.Join(dir, name), src); err != nil {
			return err
		}
		fmt.Fprintf(w, "%s/%s: the open track's\n", chapterDir(ch), name)
	}
	marker := fmt.Sprintf("%s\n\nWritten by make reset CH=%s MODE=open: this chapter is done on the open track, and the\ngrader reports it so. make reset CH=%s MODE=guided goes back to the guided starter.\n", trackOpen, ch, ch)
	if err := writeFile(filepath.Join(dir, trackFile), []byte(marker)); err != nil {
		return err
	}
	fmt.Fprintf(w, "chapter %s is on the open track: kept %s, the server is yours to design.\n", ch, strings.Join(keep, ", "))
	b.report(w)
	fmt.Fprintf(w, "read: chapters/%s/README.md, \"Design it yourself\"; check: go test ./chapters/%s/...\n", ch, ch)
	fmt.Fprintf(w, "your code may call only what make allowed CH=%s lists (make grade refuses the rest; make status shows it)\n", ch)
	return nil
}

// resetGuided puts back every Go file of the guided starter (not the
// tests) and removes the open track's files and marker.
func (c *course) resetGuided(w io.Writer, ch string) error {
	dir := filepath.Join(c.root, chapterDir(ch))
	starter, source, err := c.guidedStarter(ch)
	if err != nil {
		return err
	}
	mine, err := goFilesIn(dir)
	if err != nil {
		return err
	}
	b := c.newBackup("ch" + ch + "-guided")
	for _, name := range mine {
		if _, ok := starter[name]; !ok {
			if err := b.remove(filepath.Join(dir, name)); err != nil {
				return err
			}
			fmt.Fprintf(w, "%s/%s: removed (not in the guided starter)\n", chapterDir(ch), name)
		}
	}
	for _, name := range slices.Sorted(mapKeys(starter)) {
		p := filepath.Join(dir, name)
		if cur, err := os.ReadFile(p); err == nil && bytes.Equal(cur, starter[name]) {
			continue
		}
		if err := b.save(p); err != nil {
			return err
		}
		if err := writeFile(p, starter[name]); err != nil {
			return err
		}
		fmt.Fprintf(w, "%s/%s: the guided starter's\n", chapterDir(ch), name)
	}
	if err := b.remove(filepath.Join(dir, trackFile)); err != nil {
		return err
	}
	fmt.Fprintf(w, "chapter %s is on the guided track (from %s).\n", ch, source)
	b.report(w)
	return nil
}

// guidedStarter returns the guided starter's Go files of the chapter's
// folder (not below it, not the tests), by name, and where they came from:
// the release's pristine copy, or the newest git commit whose chapter has
// the stubs of its first exercise.
func (c *course) guidedStarter(ch string) (map[string][]byte, string, error) {
	rb, err := c.findChapter(ch)
	if err != nil {
		return nil, "", err
	}
	if len(rb.Exercises) == 0 {
		return nil, "", fmt.Errorf("chapter %s has no exercises", ch)
	}
	marked, source, err := c.starterFiles(ch, []byte("TODO(ex "+rb.Exercises[0].ID+")"))
	if err != nil {
		return nil, "", err
	}
	pristine := filepath.Join(c.root, starterDir, chapterDir(ch))
	files := map[string][]byte{}
	if fileExists(pristine) {
		names, err := goFilesIn(pristine)
		if err != nil {
			return nil, "", err
		}
		for _, name := range names {
			if files[name], err = os.ReadFile(filepath.Join(pristine, name)); err != nil {
				return nil, "", err
			}
		}
		return files, source, nil
	}
	commit, ok := strings.CutPrefix(source, "git commit ")
	if !ok || len(marked) == 0 {
		return nil, "", fmt.Errorf("no guided starter of chapter %s found (%s)", ch, source)
	}
	out, err := c.git("ls-tree", "--name-only", commit, "chapters/"+ch+"/")
	if err != nil {
		return nil, "", err
	}
	for _, rel := range strings.Fields(out) {
		name := filepath.Base(rel)
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := c.git("show", commit+":"+rel)
		if err != nil {
			return nil, "", err
		}
		files[name] = []byte(src)
	}
	return files, source, nil
}

// goFilesIn lists the non-test Go files of dir (not below it).
func goFilesIn(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if n := e.Name(); e.Type().IsRegular() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			names = append(names, n)
		}
	}
	return names, nil
}

// readKeep reads a KEEP file: one file name a line, # starts a comment.
func readKeep(p string) ([]string, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		if line = strings.TrimSpace(line); line != "" {
			names = append(names, line)
		}
	}
	return names, sc.Err()
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// backup copies files into .backup/<time>-<what>/, at the same paths as in
// the course, before they are changed or removed.
type backup struct {
	root, dir string
	saved     int
}

func (c *course) newBackup(what string) *backup {
	return &backup{root: c.root, dir: filepath.Join(".backup", time.Now().Format("20060102-150405")+"-"+what)}
}

// save copies p, if it exists, into the backup.
func (b *backup) save(p string) error {
	src, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(b.root, p)
	if err != nil {
		return err
	}
	b.saved++
	return writeFile(filepath.Join(b.root, b.dir, rel), src)
}

// remove saves p and deletes it.
func (b *backup) remove(p string) error {
	if err := b.save(p); err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func (b *backup) report(w io.Writer) {
	if b.saved > 0 {
		fmt.Fprintf(w, "your files are saved in %s/ (the same paths as in the course)\n", filepath.ToSlash(b.dir))
	}
}

// openChapters lists the chapters that have an open track (their
// testdata/open/KEEP), read from the tree rather than written here, so
// that a chapter given one (or none) is said right.
func (c *course) openChapters() string {
	keeps, _ := filepath.Glob(filepath.Join(c.root, "chapters", "[0-9][0-9]", filepath.FromSlash(openDir), "KEEP"))
	var ids []string
	for _, k := range keeps {
		ids = append(ids, filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(k)))))
	}
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}
