package rubric

import (
	"fmt"
	"strings"
)

// A chapter's hints file, hints/NN.md, is Markdown made for prose:
//
//	## 3.1 Parse and frame requests      (an exercise: its id, then its title)
//	### The idea                         (one hint: the kinds of HintKinds, in order)
//	A paragraph, wrapped as you like:
//	its lines are joined with spaces.
//
//	A blank line starts the hint's next line (a recipe's next function).
//
// Anything before the first "## " is the file's own preface.

// attachHints reads a chapter's hints file into its exercises: every
// exercise has one section with one subsection per hint kind, and the file
// has no section of an exercise the chapter does not have.
func (c *Chapter) attachHints(name string, md []byte) error {
	sections, err := parseHints(string(md))
	if err != nil {
		return fmt.Errorf("rubric: %s: %w", name, err)
	}
	for i := range c.Exercises {
		ex := &c.Exercises[i]
		if len(ex.Hints) > 0 {
			return fmt.Errorf("rubric: exercise %s has hints in rubric.json: they live in %s alone", ex.ID, name)
		}
		h, ok := sections[ex.ID]
		if !ok {
			return fmt.Errorf("rubric: %s has no section \"## %s %s\"", name, ex.ID, ex.Title)
		}
		if h.title != ex.Title {
			return fmt.Errorf("rubric: %s calls exercise %s %q, rubric.json %q", name, ex.ID, h.title, ex.Title)
		}
		ex.Hints = h.hints
		delete(sections, ex.ID)
	}
	for id := range sections {
		return fmt.Errorf("rubric: %s has a section for exercise %s, which chapter %s does not have", name, id, c.ID)
	}
	return nil
}

// hintSection is one exercise's part of a hints file.
type hintSection struct {
	title string
	hints []string
}

// parseHints reads a hints file into sections by exercise id. Each hint must
// come under the heading of its kind, in HintKinds' order.
func parseHints(md string) (map[string]*hintSection, error) {
	sections := map[string]*hintSection{}
	var cur *hintSection
	var id string
	var para, lines []string
	endPara := func() {
		if len(para) > 0 {
			lines = append(lines, strings.Join(para, " "))
			para = nil
		}
	}
	endHint := func() {
		endPara()
		if cur != nil && lines != nil {
			cur.hints[len(cur.hints)-1] = strings.Join(lines, "\n")
		}
		lines = nil
	}
	for n, line := range strings.Split(md, "\n") {
		at := func(format string, args ...any) error {
			return fmt.Errorf("line %d: %s", n+1, fmt.Sprintf(format, args...))
		}
		switch {
		case strings.HasPrefix(line, "## "):
			endHint()
			var title string
			id, title, _ = strings.Cut(strings.TrimPrefix(line, "## "), " ")
			if _, dup := sections[id]; dup {
				return nil, at("a second section for exercise %s", id)
			}
			cur = &hintSection{title: strings.TrimSpace(title)}
			sections[id] = cur
		case strings.HasPrefix(line, "### "):
			endHint()
			if cur == nil {
				return nil, at("a hint before the first exercise's section")
			}
			kind := strings.TrimSpace(strings.TrimPrefix(line, "### "))
			i := len(cur.hints)
			if i >= len(HintKinds) || !strings.EqualFold(kind, HintKinds[i]) {
				want := "no more hints"
				if i < len(HintKinds) {
					want = fmt.Sprintf("%q", "### "+strings.ToUpper(HintKinds[i][:1])+HintKinds[i][1:])
				}
				return nil, at("exercise %s: hint %q where %s comes", id, kind, want)
			}
			cur.hints = append(cur.hints, "")
		case cur == nil || len(cur.hints) == 0:
			if cur != nil && strings.TrimSpace(line) != "" {
				return nil, at("exercise %s: text before its first hint's heading", id)
			}
		case strings.TrimSpace(line) == "":
			endPara()
		default:
			para = append(para, strings.TrimSpace(line))
		}
	}
	endHint()
	return sections, nil
}
