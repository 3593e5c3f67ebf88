package main

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// makeTarget is a rule's name at the start of a Makefile line.
var makeTarget = regexp.MustCompile(`^([a-z0-9][a-z0-9 -]*):`)

// shippedRef is a path into the repository's top-level folders, also when
// written relative (./solutions/02/cmd/x, ../../solutions/04 in a link):
// read from the root, which is where the lessons' commands run.
var shippedRef = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./"-])(?:\.\.?/)*((?:chapters|solutions|tests|tools|docs)/[A-Za-z0-9_./*<>{}$-]*[A-Za-z0-9_])`)

// makeCommand is "make <target>" in prose or a code span.
var makeCommand = regexp.MustCompile(`\bmake\s+([a-z0-9][a-z0-9-]*)`)

// maintainerTargets are the Makefile's rules that only the maintainers' tree
// has: those between `ifneq ($(HAVE_SOLUTIONS),)` and its own else or endif
// (conditionals inside it nest; the help block's ifneq defines none).
func maintainerTargets(t *testing.T, makefile string) map[string]bool {
	t.Helper()
	f, err := os.Open(makefile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	targets := map[string]bool{}
	// depth counts the open conditionals; the maintainers' block is the
	// one opened at depth 1 by the HAVE_SOLUTIONS test, until its else.
	depth, block, inside := 0, 0, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "ifneq ($(HAVE_SOLUTIONS),)"):
			depth++
			block, inside = depth, true
		case strings.HasPrefix(line, "ifeq ") || strings.HasPrefix(line, "ifneq ") || strings.HasPrefix(line, "ifdef ") || strings.HasPrefix(line, "ifndef "):
			depth++
		case line == "else" && depth == block:
			inside = false
		case line == "endif":
			if depth == block {
				block, inside = 0, false
			}
			depth--
		case inside && !strings.HasPrefix(line, "\t") && !strings.HasPrefix(line, "."):
			if m := makeTarget.FindStringSubmatch(line); m != nil && !strings.Contains(line, ":=") && !strings.Contains(line, "?=") {
				for _, name := range strings.Fields(m[1]) {
					targets[name] = true
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if !targets["release-check"] || !targets["mutants"] {
		t.Fatalf("found the maintainer-only targets %v in %s: the Makefile's layout changed, teach this test", targets, makefile)
	}
	return targets
}

// TestShippedLessonsCiteOnlyWhatShips fails on any Markdown file of the
// student release (the chapters' lessons, docs/, README.md, the tools'
// notes) that cites something a student does not have: a path into
// solutions/, a file or folder the release leaves out (the mutants, the
// soak tool, the files tagged "solutions"), or a make target that only the
// maintainers' tree defines. A lesson may describe the maintainers'
// experiments; it may not send the student to run or read them. Sections
// titled "For maintainers" are not checked: the release leaves them out.
func TestShippedLessonsCiteOnlyWhatShips(t *testing.T) {
	root, err := filepath.Abs(courseRoot)
	if err != nil {
		t.Fatal(err)
	}
	c := &course{root: root}
	files, _, err := c.sourceFiles()
	if err != nil {
		t.Fatal(err)
	}
	var shipped []string
	for _, rel := range files {
		if ok, err := c.shipped(rel); err != nil {
			t.Fatal(err)
		} else if ok {
			shipped = append(shipped, rel)
		}
	}
	// ships says whether the release holds ref, or something under it.
	ships := func(ref string) bool {
		_, found := slices.BinarySearch(shipped, ref)
		i, _ := slices.BinarySearch(shipped, ref+"/")
		return found || i < len(shipped) && strings.HasPrefix(shipped[i], ref+"/")
	}
	maintainers := maintainerTargets(t, filepath.Join(root, "Makefile"))
	checked := 0
	for _, rel := range shipped {
		if filepath.Ext(rel) != ".md" {
			continue
		}
		checked++
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		// Line numbers are the release's: its copy lacks the sections for
		// maintainers.
		for i, line := range strings.Split(string(shippedMarkdown(b)), "\n") {
			where := rel + ":" + itoa(i+1) + " (in the release)"
			for _, m := range shippedRef.FindAllStringSubmatch(line, -1) {
				ref := strings.TrimRight(m[1], "./")
				switch {
				case strings.HasPrefix(ref, "solutions/"):
					t.Errorf("%s cites %s, and the student release has no solutions/: %s", where, ref, strings.TrimSpace(line))
				case placeholder(ref):
				case fileExists(filepath.Join(root, filepath.FromSlash(ref))) && !ships(ref):
					t.Errorf("%s cites %s, which the student release leaves out: %s", where, ref, strings.TrimSpace(line))
				}
			}
			for _, m := range makeCommand.FindAllStringSubmatch(line, -1) {
				if maintainers[m[1]] {
					t.Errorf("%s cites make %s, which only the maintainers' tree has: %s", where, m[1], strings.TrimSpace(line))
				}
			}
		}
	}
	if checked < 5 {
		t.Fatalf("checked %d Markdown files of the release: the walk is broken", checked)
	}
}

func TestShippedMarkdownLeavesOutMaintainersSections(t *testing.T) {
	in := "# Course\n\n## Start here\nmake grade\n\n## For maintainers\nmake test\n\n### Layout\nsolutions/NN\n```\n## not a heading\n```\n\n## Chapters\n01\n\n### For maintainers\nmake ladder\n"
	want := "# Course\n\n## Start here\nmake grade\n\n## Chapters\n01\n\n"
	if got := string(shippedMarkdown([]byte(in))); got != want {
		t.Errorf("shippedMarkdown =\n%s\nwant\n%s", got, want)
	}
	if got := string(shippedMarkdown([]byte("no headings\n"))); got != "no headings\n" {
		t.Errorf("shippedMarkdown changed a file without headings: %q", got)
	}
}

// lessonWords is the most words a chapter's lesson may hold, counted as wc -w
// counts them. A lesson is the model, the protocol, the exercises, the hints
// and an experiment or two on the student's own server, about 3,000 words;
// measurements against the originals and deep dives live in docs/, linked.
const lessonWords = 3500

// TestLessonsAreLessons fails on a chapter's lesson that has grown into a
// report (more than lessonWords words), and on one whose open track
// ("Design it yourself") comes after the exercises and hints that spell out
// the guided design: a student choosing a track must meet the choice first.
func TestLessonsAreLessons(t *testing.T) {
	lessons, err := filepath.Glob(filepath.Join(courseRoot, "chapters", "[0-9][0-9]", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(lessons) < 8 {
		t.Fatalf("found %d lessons under chapters/: the walk is broken", len(lessons))
	}
	for _, p := range lessons {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(courseRoot, p)
		if n := len(strings.Fields(string(b))); n > lessonWords {
			t.Errorf("%s has %d words (wc -w), more than %d: move measurements, reports and deep dives to docs/ "+
				"(a page per chapter) and link them in a line", filepath.ToSlash(rel), n, lessonWords)
		}
		if err := openTrackFirst(string(b)); err != nil {
			t.Errorf("%s: %v", filepath.ToSlash(rel), err)
		}
	}
}

// openTrackFirst checks that a lesson with an open track puts it before its
// exercises, and that the guided walkthrough after it says where it begins.
func openTrackFirst(lesson string) error {
	open := headingAt(lesson, "## Design it yourself")
	if open < 0 {
		return nil
	}
	if ex := headingAt(lesson, "## Exercises"); ex >= 0 && ex < open {
		return errors.New(`"Design it yourself" comes after "## Exercises": the open track goes before the guided walkthrough`)
	}
	if !strings.Contains(lesson[open:], "guided track starts here") {
		return errors.New(`no "guided track starts here" after "Design it yourself": say where the guided walkthrough begins`)
	}
	return nil
}

// headingAt is the offset of the first line that starts with prefix, or -1.
func headingAt(text, prefix string) int {
	if strings.HasPrefix(text, prefix) {
		return 0
	}
	if i := strings.Index(text, "\n"+prefix); i >= 0 {
		return i + 1
	}
	return -1
}

func TestOpenTrackFirst(t *testing.T) {
	good := "# 03\n## What you build\n## Design it yourself (the open track)\nx\n## Queue\nThe guided track starts here.\n## Exercises\n"
	if err := openTrackFirst(good); err != nil {
		t.Errorf("openTrackFirst on a lesson in order: %v", err)
	}
	late := "# 03\n## Exercises\n### Hints\n## Design it yourself\nThe guided track starts here.\n"
	if err := openTrackFirst(late); err == nil {
		t.Error("openTrackFirst accepted an open track after the exercises")
	}
	silent := "# 03\n## Design it yourself\n## Exercises\n"
	if err := openTrackFirst(silent); err == nil {
		t.Error("openTrackFirst accepted a lesson that never says where the guided track starts")
	}
	if err := openTrackFirst("# 01\n## Exercises\n"); err != nil {
		t.Errorf("openTrackFirst on a lesson without an open track: %v", err)
	}
}
