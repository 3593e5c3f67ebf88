// Package coursesum says which files are the course's rather than the
// student's, and reads and writes course.sum, the student release's list of
// them by git blob id. The grader (tools/cmd/grade) builds every test binary
// with the course's copies of these files; make student-release (tools/cmd/student)
// writes the list into the release, which has no git history to take it from.
package coursesum

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
)

// Path is where the release carries the list, relative to the module root.
// The maintainers' tree never holds it: there the course is git's HEAD.
const Path = "tools/internal/grade/course.sum"

// IsCourseFile reports whether a path (slash-separated, relative to the
// module root) is the course's rather than the student's: the test wiring
// of the chapters (and solutions), the suites and testkit (tests/**), the
// given code and tools (tools/**), go.mod and go.sum.
//
// The grader's own code (tools/cmd/grade, its engine tools/internal/grade)
// and the maintainers' machinery (tools/maint) are left out: they are never
// linked into a test binary, and the grader is whatever binary is grading.
//
// Markdown is no course file anywhere: it builds nothing, and the release
// ships it without its "For maintainers" sections.
func IsCourseFile(p string) bool {
	if strings.HasSuffix(p, ".md") {
		return false
	}
	for _, own := range []string{"tools/cmd/grade/", "tools/internal/grade/", "tools/maint/"} {
		if rest, ok := strings.CutPrefix(p, own); ok {
			// The grader's fixture chapters are courses in miniature: their
			// wiring is the course's, their other files play the student's.
			parts := strings.Split(rest, "/")
			return len(parts) == 4 && parts[0] == "testdata" && parts[1] == "chapters" && strings.HasSuffix(parts[3], "_test.go")
		}
	}
	if p == "go.mod" || p == "go.sum" || strings.HasPrefix(p, "tests/") || strings.HasPrefix(p, "tools/") {
		return true
	}
	parts := strings.Split(p, "/")
	return len(parts) == 3 && (parts[0] == "chapters" || parts[0] == "solutions") && strings.HasSuffix(parts[2], "_test.go")
}

// BlobID is git's object id of a file's content, with CRLF line endings read
// as LF (a Windows checkout is the same course).
func BlobID(content []byte) string {
	content = bytes.ReplaceAll(content, []byte("\r\n"), []byte("\n"))
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(content))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}

// Parse reads a course.sum: "<blob id> <path>" per line, "#" comments.
func Parse(text string) map[string]string {
	files := map[string]string{}
	for _, l := range strings.Split(text, "\n") {
		id, p, ok := strings.Cut(strings.TrimSpace(l), " ")
		if ok && !strings.HasPrefix(l, "#") {
			files[p] = id
		}
	}
	return files
}

// Format writes files (path → blob id) as a course.sum, sorted by path.
func Format(files map[string]string) string {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b strings.Builder
	b.WriteString("# The course's own files in this release, which tools/cmd/grade builds with whatever the checkout holds.\n")
	b.WriteString("# Written by make student-release (tools/cmd/student); the maintainers' tree has none: its course is git's HEAD.\n")
	for _, p := range paths {
		fmt.Fprintf(&b, "%s %s\n", files[p], p)
	}
	return b.String()
}
