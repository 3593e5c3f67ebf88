package main

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
)

// A strict unified-diff reader and applier, for the mutant catalogue
// (tools/maint/mutants/NN/<exercise>/<name>.patch). It needs no git or patch
// binary, and it is strict on purpose: every context and removed line must
// match the file exactly (a hunk may only have moved, as with git apply), so
// that a patch made against an older solution fails loudly instead of
// producing some other mutant than the one its comment describes.

// filePatch is the part of a patch that changes one file.
type filePatch struct {
	Old, New string // paths without their a/ and b/ prefixes; "" for /dev/null
	Hunks    []hunk
}

// Path is the file the patch applies to: the old name, or the new one for a
// file the patch creates.
func (fp filePatch) Path() string {
	if fp.Old != "" {
		return fp.Old
	}
	return fp.New
}

// hunk is one @@ section. Lines keep their ' ', '-' or '+' marker.
type hunk struct {
	OldStart, OldLines int // 1-based line where the hunk starts in the old file
	NewStart, NewLines int
	Lines              []string
	NoEOLOld, NoEOLNew bool // "\ No newline at end of file" after the old / new side's last line
	line               int  // where the hunk header is in the patch, for messages
}

// parsePatch reads a unified diff: leading comment lines (# ...), optional
// "diff"/"index" lines, then for each file "--- a/path", "+++ b/path" and its
// hunks. It returns the patches in order, or an error naming the line.
func parsePatch(text string) ([]filePatch, error) {
	lines := strings.Split(text, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	var patches []filePatch
	for i := 0; i < len(lines); {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "--- "):
			if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "+++ ") {
				return nil, fmt.Errorf("line %d: %q is not followed by a +++ line", i+1, l)
			}
			oldPath, err := patchPath(l[4:], "a/")
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", i+1, err)
			}
			newPath, err := patchPath(lines[i+1][4:], "b/")
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", i+2, err)
			}
			if oldPath == "" && newPath == "" {
				return nil, fmt.Errorf("line %d: both sides are /dev/null", i+1)
			}
			if oldPath != "" && newPath != "" && oldPath != newPath {
				return nil, fmt.Errorf("line %d: renames (%s to %s) are not supported", i+1, oldPath, newPath)
			}
			fp := filePatch{Old: oldPath, New: newPath}
			i += 2
			for i < len(lines) && strings.HasPrefix(lines[i], "@@ ") {
				h, next, err := parseHunk(lines, i)
				if err != nil {
					return nil, err
				}
				fp.Hunks = append(fp.Hunks, h)
				i = next
			}
			if len(fp.Hunks) == 0 {
				return nil, fmt.Errorf("line %d: %s has no hunks", i, fp.Path())
			}
			patches = append(patches, fp)
		case strings.HasPrefix(l, "@@ "):
			return nil, fmt.Errorf("line %d: a hunk before any --- / +++ file header", i+1)
		case len(patches) == 0 && (l == "" || strings.HasPrefix(l, "#")),
			strings.HasPrefix(l, "diff "), strings.HasPrefix(l, "index "),
			strings.HasPrefix(l, "new file mode "), strings.HasPrefix(l, "deleted file mode "):
			i++ // comments before the diff, and git's extended header lines
		default:
			return nil, fmt.Errorf("line %d: unexpected %q outside a hunk (a hunk's line counts may be wrong)", i+1, l)
		}
	}
	if len(patches) == 0 {
		return nil, errors.New("no --- / +++ file header: not a unified diff")
	}
	return patches, nil
}

// patchPath strips a header's timestamp (after a tab) and the a/ or b/
// prefix, and refuses paths that leave the folder the patch applies to.
func patchPath(field, prefix string) (string, error) {
	name, _, _ := strings.Cut(field, "\t")
	name = strings.TrimSpace(name)
	if name == "/dev/null" {
		return "", nil
	}
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return "", fmt.Errorf("path %q lacks the %s prefix (make the diff with --label %sFILE, or git diff)", name, prefix, prefix)
	}
	clean := path.Clean(rest)
	if rest == "" || path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("path %q leaves the folder the patch applies to", name)
	}
	return clean, nil
}

// parseHunk reads the hunk whose header is lines[i] and returns it with the
// index of the line after it. The header's counts decide where it ends.
func parseHunk(lines []string, i int) (hunk, int, error) {
	h := hunk{line: i + 1}
	var err error
	h.OldStart, h.OldLines, h.NewStart, h.NewLines, err = parseHunkHeader(lines[i])
	if err != nil {
		return h, 0, fmt.Errorf("line %d: %w", i+1, err)
	}
	oldLeft, newLeft := h.OldLines, h.NewLines
	last := byte(0) // the marker of the previous line, for "\ No newline"
	for i++; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, `\`) {
			switch last {
			case ' ':
				h.NoEOLOld, h.NoEOLNew = true, true
			case '-':
				h.NoEOLOld = true
			case '+':
				h.NoEOLNew = true
			default:
				return h, 0, fmt.Errorf("line %d: %q follows no line", i+1, l)
			}
			continue
		}
		if oldLeft == 0 && newLeft == 0 {
			break
		}
		if l == "" {
			l = " " // some editors strip the space of an empty context line
		}
		switch l[0] {
		case ' ':
			oldLeft--
			newLeft--
		case '-':
			oldLeft--
		case '+':
			newLeft--
		default:
			return h, 0, fmt.Errorf("line %d: hunk line %q starts with neither ' ', '-' nor '+' (the hunk at line %d is shorter than its header says)", i+1, l, h.line)
		}
		if oldLeft < 0 || newLeft < 0 {
			return h, 0, fmt.Errorf("line %d: the hunk at line %d is longer than its header says", i+1, h.line)
		}
		h.Lines = append(h.Lines, l)
		last = l[0]
	}
	if oldLeft != 0 || newLeft != 0 {
		return h, 0, fmt.Errorf("the hunk at line %d ends early: %d old and %d new lines missing", h.line, oldLeft, newLeft)
	}
	return h, i, nil
}

// parseHunkHeader reads "@@ -l,s +l,s @@ ..." (a missing ",s" means 1).
func parseHunkHeader(l string) (oldStart, oldLines, newStart, newLines int, err error) {
	f := strings.Fields(l)
	if len(f) < 4 || f[0] != "@@" || f[3] != "@@" || !strings.HasPrefix(f[1], "-") || !strings.HasPrefix(f[2], "+") {
		return 0, 0, 0, 0, fmt.Errorf("bad hunk header %q", l)
	}
	if oldStart, oldLines, err = parseRange(f[1][1:]); err != nil {
		return 0, 0, 0, 0, fmt.Errorf("bad hunk header %q: %w", l, err)
	}
	if newStart, newLines, err = parseRange(f[2][1:]); err != nil {
		return 0, 0, 0, 0, fmt.Errorf("bad hunk header %q: %w", l, err)
	}
	return oldStart, oldLines, newStart, newLines, nil
}

func parseRange(s string) (start, count int, err error) {
	a, b, hasCount := strings.Cut(s, ",")
	if start, err = strconv.Atoi(a); err != nil || start < 0 {
		return 0, 0, fmt.Errorf("bad line number %q", a)
	}
	count = 1
	if hasCount {
		if count, err = strconv.Atoi(b); err != nil || count < 0 {
			return 0, 0, fmt.Errorf("bad line count %q", b)
		}
	}
	return start, count, nil
}

// apply applies the patch to old, the file's content ("" for a file the
// patch creates), and returns the new content. Every hunk must match the
// file exactly: at its stated line, or else at the nearest line where its
// old side appears whole (a hunk that moved), after the previous hunk.
func (fp filePatch) apply(old string) (string, error) {
	if fp.Old == "" && old != "" {
		return "", fmt.Errorf("%s: the patch creates it, but it exists", fp.New)
	}
	src := splitLines(old)
	var out []string
	pos := 0 // lines of src consumed
	endsWithEOL := old == "" || strings.HasSuffix(old, "\n")
	for _, h := range fp.Hunks {
		var want, repl []string
		for _, l := range h.Lines {
			switch l[0] {
			case ' ':
				want, repl = append(want, l[1:]), append(repl, l[1:])
			case '-':
				want = append(want, l[1:])
			case '+':
				repl = append(repl, l[1:])
			}
		}
		at, ok := findHunk(src, want, h.OldStart, pos)
		if !ok {
			return "", fmt.Errorf("%s: hunk @@ -%d,%d @@ (patch line %d) does not match the file: the patch is stale; remake it against the current solution",
				fp.Path(), h.OldStart, h.OldLines, h.line)
		}
		out = append(out, src[pos:at]...)
		out = append(out, repl...)
		pos = at + len(want)
		if pos == len(src) {
			if h.NoEOLOld == endsWithEOL && len(want) > 0 {
				return "", fmt.Errorf("%s: hunk at patch line %d disagrees with the file about its final newline: the patch is stale", fp.Path(), h.line)
			}
			endsWithEOL = !h.NoEOLNew
		}
	}
	out = append(out, src[pos:]...)
	if fp.New == "" {
		if len(out) != 0 {
			return "", fmt.Errorf("%s: the patch deletes it, but lines are left", fp.Old)
		}
		return "", nil
	}
	s := strings.Join(out, "\n")
	if len(out) > 0 && endsWithEOL {
		s += "\n"
	}
	return s, nil
}

// findHunk finds where want appears in src at or after from: at the stated
// 1-based line if it matches there, else at the nearest match.
func findHunk(src, want []string, oldStart, from int) (int, bool) {
	start := oldStart - 1
	if len(want) == 0 {
		start = oldStart // an insertion at the top has OldStart 0; "-n,0" inserts after line n
	}
	matches := func(at int) bool {
		if at < from || at+len(want) > len(src) {
			return false
		}
		for i, w := range want {
			if src[at+i] != w {
				return false
			}
		}
		return true
	}
	for d := 0; d <= len(src); d++ {
		if matches(start - d) {
			return start - d, true
		}
		if matches(start + d) {
			return start + d, true
		}
	}
	return 0, false
}

// splitLines splits a file into lines without their "\n".
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
