package rubric

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The hints live in three texts: hints/NN.md (what make hint shows, one
// step at a time: the single source of that), the lesson's "### Hints"
// bullets and, for some chapters, the deep dive's "## The hints in full"
// (docs/chNN-deep-dive.md). The last two are prose written from the first;
// what this test holds is that each names exactly the rubric's exercises,
// so that an exercise added (or renumbered) is not forgotten in one of
// them. What each says is the maintainer's to keep in step; CONTRIBUTING.md
// step 7 says where.

// hintMark is a hint's bold opening: "**3.1 Parse.**", "**5.10–5.12 …".
var hintMark = regexp.MustCompile(`\*\*(\d+)\.(\d+)(?:\s*[–-]\s*(?:\d+\.)?(\d+))?`)

// section returns the lines of text under the heading (a whole line)
// up to the next heading of that level or above; ok is false without one.
func section(text, heading string) (string, bool) {
	level := strings.Index(heading, " ")
	_, rest, ok := strings.Cut(text, "\n"+heading+"\n")
	if !ok {
		return "", false
	}
	var out []string
	for _, line := range strings.Split(rest, "\n") {
		if n := len(line) - len(strings.TrimLeft(line, "#")); n > 0 && n <= level && strings.HasPrefix(line[n:], " ") {
			break
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n"), true
}

// hinted lists the exercises a section's bold openings name, ranges
// spelled out.
func hinted(chapter int, sec string) map[string]bool {
	out := map[string]bool{}
	for _, m := range hintMark.FindAllStringSubmatch(sec, -1) {
		if c, _ := strconv.Atoi(m[1]); c != chapter {
			continue
		}
		from, _ := strconv.Atoi(m[2])
		to := from
		if m[3] != "" {
			to, _ = strconv.Atoi(m[3])
		}
		for k := from; k <= to; k++ {
			out[m[1]+"."+strconv.Itoa(k)] = true
		}
	}
	return out
}

// TestHintTextsNameEveryExercise: the lesson's "### Hints" and the deep
// dive's "## The hints in full" (where the chapter has one) each have a
// hint for every exercise of the rubric with a stub (one with no_stub checks
// what earlier exercises built, and may go without), and none for an
// exercise the rubric lacks.
func TestHintTextsNameEveryExercise(t *testing.T) {
	r, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range r.Chapters {
		n, _ := strconv.Atoi(ch.ID)
		places := map[string]string{
			filepath.Join("chapters", ch.ID, "README.md"):     "### Hints",
			filepath.Join("docs", "ch"+ch.ID+"-deep-dive.md"): "## The hints in full",
		}
		for page, heading := range places {
			b, err := os.ReadFile(filepath.Join(courseRoot, page))
			if errors.Is(err, fs.ErrNotExist) && strings.HasPrefix(page, "docs") {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			sec, ok := section(strings.ReplaceAll(string(b), "\r\n", "\n"), heading)
			if !ok {
				if strings.HasPrefix(page, "chapters") {
					t.Errorf("%s has no %q section: the lesson's hints, one bullet per exercise", page, heading)
				}
				continue
			}
			got := hinted(n, sec)
			for _, ex := range ch.Exercises {
				if !got[ex.ID] && ex.NoStub == "" {
					t.Errorf("%s, %q: no hint opens with **%s (the rubric's %s %q): write one from hints/%s.md, or widen a range (**%s–…)", page, heading, ex.ID, ex.ID, ex.Title, ch.ID, ex.ID)
				}
				delete(got, ex.ID)
			}
			for id := range got {
				t.Errorf("%s, %q: a hint for %s, which the rubric does not have", page, heading, id)
			}
		}
	}
}

// TestMapSaysWhereHintsLive: the map's "where things live" row for hints
// names the three texts, so that "the single source" is not read as "the
// only place" (newcomer4 changed one and found the other two by grep).
func TestMapSaysWhereHintsLive(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(courseRoot, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	var row string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "| change points, titles or hints |") {
			row = line
		}
	}
	if row == "" {
		t.Fatal("docs/architecture.md has no row \"| change points, titles or hints |\"")
	}
	for _, place := range []string{"`rubric/hints/NN.md`", "`### Hints`", "`## The hints in full`", "`docs/chNN-deep-dive.md`"} {
		if !strings.Contains(row, place) {
			t.Errorf("docs/architecture.md, the hints row does not name %s: the hints live in three texts, and the row sends a maintainer to each", place)
		}
	}
}
