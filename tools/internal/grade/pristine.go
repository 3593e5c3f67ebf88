package grade

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"serverlab/tools/internal/coursesum"
)

// Pristine course files. A chapter's test binary is built from the student's
// own non-test files and nothing else of theirs: the test wiring
// (chapters/NN/*_test.go), the suites and testkit (tests/**), the given code
// and the grader (tools/**), go.mod and go.sum are the course's
// (coursesum.IsCourseFile). The grader learns what they are, by git blob id,
// from the tree it takes the course from (courseList): the student release's
// tools/internal/grade/course.sum, which make student-release writes; where there is
// none (the maintainers' tree), the git tree of HEAD, since what the
// maintainers committed is the course. For each such file that the checkout
// does not hold exactly (up to line endings), the grader takes the course's
// copy from the repository's git objects (by blob id, so no ref the student
// can move is trusted) or from a clean course directory (-course DIR), and
// builds with it through go build's -overlay (and -modfile for go.mod);
// files the course does not have (an extra *_test.go, a new file in a suite)
// are overlaid as deleted. Every such substitution is a line in the report.
// When the course's copy cannot be found (a student release has no git
// history), the chapters the file can affect score nothing, with cause
// integrity and what to restore.

// Course modes (-course).
const (
	courseDefault  = ""         // the checkout's list (course.sum or git HEAD), with git objects as the source of the course's copies
	courseCheckout = "checkout" // trust the checkout as it is: maintainers proving the course itself
)

// pristine prepares, per chapter, the overlay that puts the course's files
// in place of the checkout's.
type pristine struct {
	mode  string // courseDefault, courseCheckout, or a directory
	root  string
	tmp   string
	files map[string]string // course path → blob id
	from  string            // where the list came from, for the report
	// refused: the tree's list of the course's files is there but is not a
	// file the grader reads (readTreeFile): nothing is graded.
	refused string

	once   sync.Once
	shared overlay  // go.mod, go.sum, tests/**, tools/**: the same for every chapter
	notes  []string // what was substituted, for the report
	fatal  []string // go.mod or go.sum differ and could not be restored: nothing can be graded
	// Shared course files that differ and could not be restored, and why
	// not: they cost the chapters whose tests use their packages.
	unrestorable map[string]string
}

// overlay is what a build gets: go build's -overlay replacements and an
// optional -modfile.
type overlay struct {
	Replace map[string]string `json:"Replace"`
	modfile string
}

func newPristine(mode, root, tmp string) *pristine {
	p := &pristine{mode: mode, root: root, tmp: tmp}
	switch mode {
	case courseCheckout:
	case courseDefault:
		p.files, p.from = CourseList(root, false)
		p.refused = courseListRefused(root)
	default:
		p.files, p.from = CourseList(mode, true)
		p.refused = courseListRefused(mode)
	}
	return p
}

// Lines for the report's "course files" section.
func (p *pristine) describe() []string {
	switch {
	case p.mode == courseCheckout:
		return []string{"course files: taken from the checkout as they are (-course checkout), not verified"}
	case p.refused != "":
		return []string{"course files: " + p.refused + ": the course's files cannot be verified, nothing is graded"}
	case len(p.files) == 0:
		why := "no git HEAD"
		if p.from != "" {
			why = p.from
		}
		return []string{"course files: no list of the course's files here (no " + coursesum.Path + ", " + why + "); taken from the checkout, not verified"}
	}
	p.prepareShared()
	if len(p.notes) == 0 && len(p.fatal) == 0 && len(p.unrestorable) == 0 {
		if p.mode == courseDefault {
			// The list is the graded tree's own (its course.sum or its git
			// HEAD): it says the files match what the tree itself claims,
			// which a student's repository can forge along with the files.
			return []string{fmt.Sprintf("course files: all %d match the graded tree's own list (%s); grading another's tree, add -course DIR to check them against the course",
				len(p.files), p.from)}
		}
		return []string{fmt.Sprintf("course files: all %d match the course's copies (listed by %s)", len(p.files), p.from)}
	}
	return slices.Concat(p.notes, p.fatal)
}

// modfile is the course's go.mod when the checkout's differs ("" if it
// does not, or the checkout is trusted).
func (p *pristine) modfile() string {
	if p.mode == courseCheckout || len(p.files) == 0 {
		return ""
	}
	p.prepareShared()
	return p.shared.modfile
}

// forChapter returns the overlay for chapter dir (target/NN), and a reason
// the chapter cannot be graded at all ("" if it can).
func (p *pristine) forChapter(dir string) (overlay, string) {
	if p.mode != courseCheckout && p.refused != "" {
		return overlay{Replace: map[string]string{}}, p.refused + ": the course's files cannot be verified, so nothing is graded (restore it)"
	}
	if p.mode == courseCheckout || len(p.files) == 0 {
		return overlay{Replace: map[string]string{}}, ""
	}
	p.prepareShared()
	ov := overlay{Replace: map[string]string{}, modfile: p.shared.modfile}
	for k, v := range p.shared.Replace {
		ov.Replace[k] = v
	}
	if len(p.fatal) > 0 {
		return ov, strings.TrimPrefix(p.fatal[0], "course files: ")
	}
	if msg := p.unusable(dir, ov); msg != "" {
		p.note("course files: %s", msg)
		return ov, msg
	}
	// The wiring: the course's *_test.go files of this chapter and no others.
	var wiring []string
	for f := range p.files {
		if path.Dir(f) == dir && strings.HasSuffix(f, "_test.go") {
			wiring = append(wiring, f)
		}
	}
	if len(wiring) == 0 {
		return ov, "" // not a chapter of the course's (a fixture); nothing to compare with
	}
	for _, f := range wiring {
		if msg := p.restore(f, &ov); msg != "" {
			// The report's course-files lines must say so too: they end
			// with "all N match" only when none was refused.
			p.note("course files: %s", msg)
			return ov, msg
		}
	}
	local, _ := filepath.Glob(filepath.Join(p.root, filepath.FromSlash(dir), "*_test.go"))
	for _, abs := range local {
		rel := dir + "/" + filepath.Base(abs)
		if _, ok := p.files[rel]; !ok {
			ov.Replace[abs] = ""
			p.note("course files: %s is not one of the course's test files: left out of the build", rel)
		}
	}
	return ov, ""
}

// prepareShared compares the files every chapter shares, once.
func (p *pristine) prepareShared() {
	p.once.Do(func() {
		p.shared.Replace = map[string]string{}
		var paths []string
		for f := range p.files {
			if !strings.HasPrefix(f, "chapters/") && !strings.HasPrefix(f, "solutions/") {
				paths = append(paths, f)
			}
		}
		sort.Strings(paths)
		p.unrestorable = map[string]string{}
		for _, f := range paths {
			msg := p.restore(f, &p.shared)
			switch {
			case msg == "":
			case f == "go.mod" || f == "go.sum":
				p.fatal = append(p.fatal, "course files: "+msg)
			default:
				p.unrestorable[f] = msg
			}
		}
		for _, dir := range []string{"tests", "tools"} {
			p.leaveOutForeign(dir)
		}
	})
}

// unusable says why chapter dir cannot be graded when shared course files
// differ and cannot be restored: if any of them is in a package its test
// binary uses (go list -deps -test, with the course's files restored so
// far, so that a tampered file cannot hide an import). Those it does not use
// are a note. "" means the chapter can be graded.
func (p *pristine) unusable(dir string, ov overlay) string {
	if len(p.unrestorable) == 0 {
		return ""
	}
	flags, err := ov.flags(p.tmp, "deps-"+strings.ReplaceAll(dir, "/", "_"))
	if err != nil {
		return err.Error()
	}
	args := append([]string{"list", "-e", "-deps", "-test", "-f", "{{.Dir}}"}, flags...)
	cmd := exec.Command("go", append(args, "./"+dir)...)
	cmd.Dir = p.root
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := outputTracked(cmd, false)
	if err != nil {
		return fmt.Sprintf("the grader could not list the packages %s's tests use: %v", dir, err)
	}
	used := map[string]bool{}
	for _, d := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if rel, err := filepath.Rel(p.root, d); err == nil {
			used[filepath.ToSlash(rel)] = true
		}
	}
	var files []string
	for f := range p.unrestorable {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		if used[path.Dir(f)] {
			return p.unrestorable[f]
		}
	}
	for _, f := range files {
		p.note("course files: %s differs from the course's copy, which is not available here; %s's tests do not use it", f, dir)
	}
	return ""
}

// buildSources are the files the go command compiles or embeds from a
// package directory; a foreign one of them changes what is built.
func isBuildSource(name string) bool {
	return strings.HasSuffix(name, ".go") || slices.Contains(nonGoSources, filepath.Ext(name))
}

// leaveOutForeign overlays as deleted every source file under dir that the
// course does not have.
func (p *pristine) leaveOutForeign(dir string) {
	base := filepath.Join(p.root, dir)
	_ = filepath.WalkDir(base, func(abs string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && abs != base {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(p.root, abs)
		rel = filepath.ToSlash(rel)
		if _, ok := p.files[rel]; ok || !isCourseFile(rel) || !isBuildSource(d.Name()) {
			return nil
		}
		p.shared.Replace[abs] = ""
		p.note("course files: %s is not one of the course's files: left out of the build", rel)
		return nil
	})
}

// restore makes sure the build sees the course's copy of f: nothing to do if
// the checkout has it, an overlay (or -modfile) if its copy can be found. It
// returns why not, if it cannot.
func (p *pristine) restore(f string, ov *overlay) string {
	want := p.files[f]
	abs := filepath.Join(p.root, filepath.FromSlash(f))
	got, err := readTreeFile(abs)
	if err == nil && blobID(got) == want {
		return ""
	}
	what := "differs from the course's copy"
	switch {
	case isRefused(err):
		what = err.(*errTreeFile).why // a link, a device, a huge file: never read
	case err != nil:
		what = "is missing"
	}
	content, from := p.courseCopy(f, want)
	if content == nil {
		return fmt.Sprintf("%s %s, and the course's copy is not available here (no git history with it; "+
			"restore the file, or pass -course DIR with a clean copy of the course): not graded", f, what)
	}
	dst := filepath.Join(p.tmp, "pristine", filepath.FromSlash(f))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err.Error()
	}
	if err := os.WriteFile(dst, content, 0o644); err != nil {
		return err.Error()
	}
	switch f {
	case "go.mod":
		ov.modfile = dst
		// -modfile reads go.sum beside it: start from the checkout's, which
		// restoring go.sum below overwrites if it differs.
		if sum, err := readTreeFile(filepath.Join(p.root, "go.sum")); err == nil {
			if _, err := os.Stat(strings.TrimSuffix(dst, ".mod") + ".sum"); err != nil {
				_ = os.WriteFile(strings.TrimSuffix(dst, ".mod")+".sum", sum, 0o644)
			}
		}
	case "go.sum":
		_ = os.WriteFile(filepath.Join(p.tmp, "pristine", "go.sum"), content, 0o644)
		if ov.modfile == "" {
			// -modfile needs a go.mod beside the go.sum: the course's.
			mod, _ := p.courseCopy("go.mod", p.files["go.mod"])
			if mod == nil {
				mod, _ = readTreeFile(filepath.Join(p.root, "go.mod"))
			}
			modDst := filepath.Join(p.tmp, "pristine", "go.mod")
			_ = os.WriteFile(modDst, mod, 0o644)
			ov.modfile = modDst
		}
	default:
		ov.Replace[abs] = dst
	}
	p.note("course files: %s %s: built with the course's copy (from %s)", f, what, from)
	return ""
}

func (p *pristine) note(format string, args ...any) {
	p.notes = append(p.notes, fmt.Sprintf(format, args...))
}

// courseCopy finds the content of blob id: in a clean course directory, or
// in the git objects of the checkout (or of that directory).
func (p *pristine) courseCopy(f, id string) ([]byte, string) {
	dirs := []string{p.root}
	if p.mode != courseDefault && p.mode != courseCheckout {
		if b, err := readTreeFile(filepath.Join(p.mode, filepath.FromSlash(f))); err == nil && blobID(b) == id {
			return b, p.mode
		}
		dirs = append(dirs, p.mode)
	}
	for _, dir := range dirs {
		if out, err := gitOutput(dir, "cat-file", "blob", id); err == nil && blobID(out) == id {
			return out, "git object " + id[:12]
		}
	}
	return nil, ""
}

// readOverlayFile reads a go build -overlay file's replacements; "" is none.
func ReadOverlay(path string) (map[string]string, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("-overlay: %w", err)
	}
	var ov overlay
	if err := json.Unmarshal(b, &ov); err != nil {
		return nil, fmt.Errorf("-overlay %s: %w", path, err)
	}
	return ov.Replace, nil
}

// write saves the overlay for go build, returning the flags that use it.
func (ov overlay) flags(tmp, name string) ([]string, error) {
	var flags []string
	if len(ov.Replace) > 0 {
		b, err := json.Marshal(ov)
		if err != nil {
			return nil, err
		}
		file := filepath.Join(tmp, name+".overlay.json")
		if err := os.WriteFile(file, b, 0o644); err != nil {
			return nil, err
		}
		flags = append(flags, "-overlay="+file)
	}
	if ov.modfile != "" {
		flags = append(flags, "-modfile="+ov.modfile)
	}
	return flags, nil
}
