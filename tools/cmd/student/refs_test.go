package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"serverlab/tools/internal/coursesum"
)

// courseRoot is the module root seen from this package's folder.
const courseRoot = "../../.."

// The maintainers' notes live outside the repository and students never have
// them: a lesson or a comment that cites them sends the reader nowhere. The
// names are assembled so that this file does not cite them itself.
var notes = regexp.MustCompile(`(?:^|[^A-Za-z0-9_.-])(?:\.\./)?` + "shar" + `ed/|` + "se" + `eds/[A-Za-z0-9_-]+\.txt|\b(?:` +
	strings.Join([]string{"PERFOR" + "MANCE", "PROTO" + "COLS", "CHAT" + "CORE", "PE" + "ERS"}, "|") + `)(?:\.md|\s+§)`)

// repoPath is a path into the repository's top-level folders.
// A path in double quotes is an example value in a comment, not a reference.
var repoPath = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./"-])((?:chapters|solutions|tests|tools|docs)/[A-Za-z0-9_./*<>{}$-]*[A-Za-z0-9_])`)

// pendingAtMerge are files that another branch of the same change adds;
// delete an entry once the file is on main (the test then checks it).
var pendingAtMerge = map[string]string{}

// pending says whether ref is, or is inside, a path of pendingAtMerge.
func pending(ref string) bool {
	for p := range pendingAtMerge {
		if ref == p || strings.HasPrefix(ref, p+"/") {
			return true
		}
	}
	return false
}

// mdLink is a Markdown link's target.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// chapterMention is "chapter 05", "chapters 02 and 05", "ch05".
var chapterMention = regexp.MustCompile(`(?i)\bchapters?\s+(\d\d(?:(?:\s+and\s+|\s+or\s+|\s*[–-]\s*)\d\d)*)\b|\bch(\d\d)\b`)

var twoDigits = regexp.MustCompile(`\d\d`)

// placeholder marks a path written as a pattern (chapters/NN, tools/<x>) or
// one that a command in the text generates (a test binary, a profile).
func placeholder(p string) bool {
	return strings.ContainsAny(p, "<>*{}$") || strings.HasSuffix(p, ".test") || strings.HasSuffix(p, ".out") || strings.Contains(p, "NN") || strings.Contains(p, "N_M") ||
		strings.Contains(p, "N.M") || strings.Contains(p, "/x.") || strings.HasSuffix(p, "/x")
}

// TestNoDanglingReferences fails on any lesson, document or Go comment that
// cites the maintainers' notes, a file or folder of the repository that is
// not there, a Markdown link or anchor that leads nowhere, or a chapter that
// does not exist. References into the maintainers' rooms (solutions/,
// tools/maint/, …) are only checked where solutions/ exists (the student
// release has none of them); tools/internal/grade/course.sum
// is the release's (make student-release writes it), never the maintainers'.
func TestNoDanglingReferences(t *testing.T) {
	root, err := filepath.Abs(courseRoot)
	if err != nil {
		t.Fatal(err)
	}
	haveSolutions := fileExists(filepath.Join(root, "solutions"))
	self, _ := filepath.Abs("refs_test.go")
	anchors := map[string]map[string]bool{} // Markdown file → its heading anchors

	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "dist" || name == "mutants") {
				return filepath.SkipDir
			}
			return nil
		}
		if p == self {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		var lines []numbered
		switch ext := filepath.Ext(name); {
		case ext == ".md":
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for i, l := range strings.Split(string(b), "\n") {
				lines = append(lines, numbered{i + 1, l})
			}
			checkLinks(t, root, rel, string(b), anchors, haveSolutions)
		case ext == ".go":
			lines = goComments(p)
		case ext == ".sh" || ext == ".c" || ext == ".json" || name == "Makefile":
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for i, line := range strings.Split(string(b), "\n") {
				if notes.MatchString(line) {
					t.Errorf("%s:%d cites the maintainers' notes, which students do not have (cite docs/originals.md or docs/protocols.md): %s", rel, i+1, strings.TrimSpace(line))
				}
			}
			return nil
		default:
			return nil
		}
		for _, nl := range lines {
			where, line := rel+":"+itoa(nl.n), nl.text
			if notes.MatchString(line) {
				t.Errorf("%s cites the maintainers' notes, which students do not have (cite docs/originals.md or docs/protocols.md): %s", where, strings.TrimSpace(line))
			}
			for _, m := range repoPath.FindAllStringSubmatch(line, -1) {
				ref := strings.TrimRight(m[1], "./")
				if placeholder(ref) || pending(ref) || ref == coursesum.Path || (!haveSolutions && leftOutOfRelease(ref)) {
					continue
				}
				if !fileExists(filepath.Join(root, filepath.FromSlash(ref))) {
					t.Errorf("%s refers to %s, which does not exist: %s", where, ref, strings.TrimSpace(line))
				}
			}
			if strings.HasPrefix(rel, "tools/cmd/grade/") {
				continue // the grader's tests name their fixture chapters (tools/cmd/grade/testdata)
			}
			for _, m := range chapterMention.FindAllStringSubmatch(line, -1) {
				for _, nn := range twoDigits.FindAllString(m[1]+m[2], -1) {
					if !fileExists(filepath.Join(root, "chapters", nn)) {
						t.Errorf("%s mentions chapter %s, which does not exist (yet): %s", where, nn, strings.TrimSpace(line))
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// numbered is one line of a file and its number.
type numbered struct {
	n    int
	text string
}

// goComments returns the lines of a Go file's comments.
func goComments(file string) []numbered {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, b, parser.ParseComments)
	var out []numbered
	if err != nil { // a file that does not parse is checked whole
		for i, l := range strings.Split(string(b), "\n") {
			out = append(out, numbered{i + 1, l})
		}
		return out
	}
	for _, g := range f.Comments {
		for _, c := range g.List {
			first := fset.Position(c.Pos()).Line
			for i, l := range strings.Split(c.Text, "\n") {
				out = append(out, numbered{first + i, l})
			}
		}
	}
	return out
}

// checkLinks checks the relative Markdown links of one file: the target
// exists and, for a link into a Markdown file, so does the anchor.
func checkLinks(t *testing.T, root, rel, text string, anchors map[string]map[string]bool, haveSolutions bool) {
	dir := filepath.Dir(filepath.Join(root, filepath.FromSlash(rel)))
	for i, line := range strings.Split(text, "\n") {
		for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			abs := filepath.Join(dir, filepath.FromSlash(file))
			if file == "" {
				abs = filepath.Join(root, filepath.FromSlash(rel))
			}
			relTarget, _ := filepath.Rel(root, abs)
			if !haveSolutions && strings.HasPrefix(filepath.ToSlash(relTarget), "solutions/") {
				continue
			}
			if !fileExists(abs) {
				t.Errorf("%s:%d links to %s, which does not exist", rel, i+1, target)
				continue
			}
			if anchor == "" || !strings.HasSuffix(abs, ".md") {
				continue
			}
			if anchors[abs] == nil {
				anchors[abs] = headingAnchors(abs)
			}
			if !anchors[abs][anchor] {
				t.Errorf("%s:%d links to %s, but %s has no heading with the anchor #%s", rel, i+1, target, filepath.ToSlash(relTarget), anchor)
			}
		}
	}
}

// headingAnchors are the anchors GitHub gives a Markdown file's headings:
// lower case, punctuation dropped, spaces to hyphens.
func headingAnchors(file string) map[string]bool {
	b, _ := os.ReadFile(file)
	out := map[string]bool{}
	inFence := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var s strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				s.WriteRune(r)
			case r == ' ':
				s.WriteRune('-')
			}
		}
		a := s.String()
		for n := 0; out[a]; n++ { // duplicates get -1, -2, …
			a = s.String() + "-" + itoa(n+1)
		}
		out[a] = true
	}
	return out
}

func itoa(n int) string {
	const digits = "0123456789"
	if n < 10 {
		return digits[n : n+1]
	}
	return itoa(n/10) + digits[n%10:n%10+1]
}

// leftOutOfRelease says whether a path is in one of the rooms the student
// release leaves out (maintainerOnly).
func leftOutOfRelease(ref string) bool {
	for _, dir := range maintainerOnly {
		if ref == dir || strings.HasPrefix(ref, dir+"/") {
			return true
		}
	}
	return false
}
