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
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"serverlab/tools/internal/rubric"
)

// course is one checkout of the course (a git clone, an exported tree or the
// student release) and the rubric that grades it.
type course struct {
	root        string
	rb          *rubric.Rubric
	race        bool // run tests under -race (cleared, with a note, when cgo is missing)
	raceChecked bool
	log         io.Writer // notes for the student: what was cached, what was turned off
	ranTests    bool      // results ran tests this time (status says what a busy machine cost them)
}

// openCourse finds the course from dir (or the current directory) upwards:
// the folder whose go.mod declares module serverlab.
func openCourse(dir string) (*course, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		dir = wd
	}
	root, err := findRoot(dir)
	if err != nil {
		return nil, err
	}
	rb, err := rubric.Load()
	if err != nil {
		return nil, err
	}
	return &course{root: root, rb: rb, race: true, log: io.Discard}, nil
}

var moduleLine = regexp.MustCompile(`(?m)^module\s+serverlab\s*$`)

func findRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if mod, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && moduleLine.Match(mod) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("%s is not inside the course: no go.mod with module serverlab above it", dir)
		}
	}
}

// chapterDir is chapters/NN, relative to the root.
func chapterDir(ch string) string { return filepath.Join("chapters", ch) }

// supported says whether the chapter can run on this system, and why not.
// Chapter 05's event loop is built on epoll, which only Linux has.
func supported(ch string) (bool, string) {
	if ch == "05" && runtime.GOOS != "linux" {
		return false, "needs Linux (epoll): open the course in its dev container (.devcontainer)"
	}
	return true, ""
}

// findExercise accepts "3.4", "3_4", "Ex3_4_" or "TestEx3_4_Server" and
// returns the rubric's exercise and its chapter; an unknown one is an error
// that lists the valid ids.
func (c *course) findExercise(arg string) (rubric.Chapter, rubric.Exercise, error) {
	id := normalizeExercise(arg)
	for _, ch := range c.rb.Chapters {
		for _, ex := range ch.Exercises {
			if ex.ID == id {
				return ch, ex, nil
			}
		}
	}
	var ids []string
	for _, ch := range c.rb.Chapters {
		var chIDs []string
		for _, ex := range ch.Exercises {
			chIDs = append(chIDs, ex.ID)
		}
		ids = append(ids, "  "+ch.ID+": "+strings.Join(chIDs, " "))
	}
	return rubric.Chapter{}, rubric.Exercise{}, usagef("unknown exercise %q; the exercises are:\n%s", arg, strings.Join(ids, "\n"))
}

var exerciseArg = regexp.MustCompile(`^(?:Test)?(?:Ex)?([0-9]+)[._]([0-9]+)_?`)

func normalizeExercise(arg string) string {
	m := exerciseArg.FindStringSubmatch(strings.TrimSpace(arg))
	if m == nil {
		return arg
	}
	a, _ := strconv.Atoi(m[1])
	b, _ := strconv.Atoi(m[2])
	return fmt.Sprintf("%d.%d", a, b)
}

// findChapter accepts "03" or "3"; an unknown one is an error that lists the
// chapters.
func (c *course) findChapter(arg string) (rubric.Chapter, error) {
	arg = strings.TrimSpace(arg)
	if n, err := strconv.Atoi(arg); err == nil && n >= 0 && n < 100 {
		arg = fmt.Sprintf("%02d", n)
	}
	if ch, ok := c.rb.Chapter(arg); ok {
		return ch, nil
	}
	return rubric.Chapter{}, usagef("unknown chapter %q; %s", arg, c.chapterList())
}

// chapterList lists the rubric's chapters, one per line.
func (c *course) chapterList() string {
	ids := []string{"the chapters are:"}
	for _, ch := range c.rb.Chapters {
		ids = append(ids, fmt.Sprintf("  %s  %s", ch.ID, ch.Title))
	}
	return strings.Join(ids, "\n")
}

// todo is one TODO(ex N.M) comment: where it is, and its text (the comment
// lines that follow it, without the slashes).
type todo struct {
	File string // relative to the root, with forward slashes
	Line int
	Text []string
}

func (t todo) where() string { return fmt.Sprintf("%s:%d", t.File, t.Line) }

// todos lists the TODO comments of one exercise in the chapter's non-test Go
// files, in file and line order. It skips testdata/: what is there (the open
// track's starter in testdata/open, say) is never the student's code — on the
// open track, make reset has copied the starter into the chapter — so its
// TODOs would send a student to a file the tests do not build.
func (c *course) todos(ch rubric.Chapter, ex rubric.Exercise) ([]todo, error) {
	marker := []byte("TODO(ex " + ex.ID + ")")
	var found []todo
	dir := filepath.Join(c.root, chapterDir(ch.ID))
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(c.root, path)
		found = append(found, scanTodos(filepath.ToSlash(rel), src, marker)...)
		return nil
	})
	return found, err
}

func scanTodos(file string, src, marker []byte) []todo {
	var found []todo
	var cur *todo
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		comment, isComment := strings.CutPrefix(line, "//")
		switch {
		case bytes.Contains([]byte(line), marker):
			found = append(found, todo{File: file, Line: n})
			cur = &found[len(found)-1]
			_, text, _ := strings.Cut(line, string(marker))
			cur.Text = append(cur.Text, strings.TrimSpace(strings.TrimPrefix(text, ":")))
		case cur != nil && isComment && !strings.Contains(comment, "TODO("):
			cur.Text = append(cur.Text, strings.TrimSpace(comment))
		default:
			cur = nil
		}
	}
	return found
}

// lessonExcerpt returns the lesson's paragraph about the exercise: the hint
// bullet, paragraph or section that starts with its id (or with a range
// such as 5.10–5.12 that holds it). It returns nil when there is none.
func (c *course) lessonExcerpt(ch rubric.Chapter, ex rubric.Exercise) []string {
	src, err := os.ReadFile(filepath.Join(c.root, chapterDir(ch.ID), "README.md"))
	if err != nil {
		return nil
	}
	lines := strings.Split(strings.ReplaceAll(string(src), "\r\n", "\n"), "\n")
	for i, l := range lines {
		heading, ok := startsExercise(l, ex.ID)
		if !ok {
			continue
		}
		out := []string{l}
		for _, m := range lines[i+1:] {
			if heading && strings.HasPrefix(m, "#") {
				break
			}
			if !heading && (strings.TrimSpace(m) == "" || strings.HasPrefix(m, "- **") || strings.HasPrefix(m, "**")) {
				break
			}
			out = append(out, m)
		}
		for len(out) > 0 && strings.TrimSpace(out[len(out)-1]) == "" {
			out = out[:len(out)-1]
		}
		return out
	}
	return nil
}

var exerciseStart = regexp.MustCompile("^(- \\*\\*|\\*\\*|#{2,4} )`?([0-9]+)\\.([0-9]+)(?:[–-]([0-9]+)\\.([0-9]+))?[ .`*]")

// startsExercise says whether a lesson line starts the text about exercise
// id, and whether that text is a heading (it then runs to the next heading).
func startsExercise(line, id string) (heading, ok bool) {
	m := exerciseStart.FindStringSubmatch(line)
	if m == nil {
		return false, false
	}
	a, b, _ := strings.Cut(id, ".")
	ch, _ := strconv.Atoi(a)
	n, _ := strconv.Atoi(b)
	from, _ := strconv.Atoi(m[3])
	to := from
	if m[4] != "" {
		to, _ = strconv.Atoi(m[5])
	}
	mch, _ := strconv.Atoi(m[2])
	return strings.HasPrefix(line, "#"), mch == ch && from <= n && n <= to
}

// chapterFiles lists every file under chapters/NN, relative to the root, in
// a stable order.
func (c *course) chapterFiles(ch string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(filepath.Join(c.root, chapterDir(ch)), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(c.root, path)
			files = append(files, rel)
		}
		return nil
	})
	slices.Sort(files)
	return files, err
}

// errNoStarter is returned when neither a pristine copy nor git history holds
// the starter code.
var errNoStarter = errors.New("no starter code found: this is neither the student release (.starter/) nor a git checkout")
