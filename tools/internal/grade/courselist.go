// Which files are the course's, and where their true copies come from: the
// release's course.sum, or git's HEAD (pristine.go restores them).

package grade

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"serverlab/tools/internal/coursesum"
)

// isCourseFile reports whether a path (slash-separated, relative to the
// module root) is the course's rather than the student's.
func isCourseFile(p string) bool { return coursesum.IsCourseFile(p) }

// blobID is git's object id of a file's content (CRLF read as LF).
func blobID(content []byte) string { return coursesum.BlobID(content) }

// courseList finds the course's files (path → blob id) in the tree src, and
// says where the list came from: src's tools/internal/grade/course.sum (a student
// release, or a repository made from one), else the git tree of src's HEAD
// (the maintainers' tree, where no course.sum is ever committed). A clean
// copy of the course that has neither (-course DIR, an exported tree) is the
// course as its files stand. nil: no list (the checkout is not verified),
// and the second result then says why not when git was asked.
//
// A course.sum the grader refuses to read (readTreeFile: a link, a device,
// a huge file) is no list either; courseListRefused says why, and nothing is graded.
func CourseList(src string, clean bool) (map[string]string, string) {
	b, err := readTreeFile(filepath.Join(src, filepath.FromSlash(coursesum.Path)))
	if err == nil {
		return coursesum.Parse(string(b)), coursesum.Path
	}
	if isRefused(err) {
		return nil, ""
	}
	files, commit, err := headList(src)
	if err == nil {
		return files, "git HEAD " + commit[:min(12, len(commit))]
	}
	if !clean {
		return nil, "no git HEAD: " + err.Error()
	}
	files = map[string]string{}
	_ = filepath.WalkDir(src, func(abs string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && abs != src {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(src, abs)
		rel = filepath.ToSlash(rel)
		if !d.Type().IsRegular() || !isCourseFile(rel) {
			return nil
		}
		if b, err := readTreeFile(abs); err == nil {
			files[rel] = blobID(b)
		}
		return nil
	})
	return files, "the files of " + src
}

// courseListRefused says why the tree src's course.sum is there but was not
// read ("" if it was, or is not there): a tree that holds one the grader
// refuses cannot be verified, and is not graded.
func courseListRefused(src string) string {
	if _, err := readTreeFile(filepath.Join(src, filepath.FromSlash(coursesum.Path))); err != nil && isRefused(err) {
		return err.Error()
	}
	return ""
}

// headList lists the course files of the commit checked out at src (which
// must be the top of its git work tree) by blob id, and names the commit.
func headList(src string) (map[string]string, string, error) {
	top, err := gitOutput(src, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, "", err
	}
	abs, err := filepath.Abs(src) // -course . names the current directory
	if err != nil {
		return nil, "", err
	}
	a, errA := filepath.EvalSymlinks(strings.TrimSpace(string(top)))
	b, errB := filepath.EvalSymlinks(abs)
	if errA != nil || errB != nil || filepath.Clean(a) != filepath.Clean(b) {
		return nil, "", fmt.Errorf("%s is not the top of its git work tree", src)
	}
	commit, err := gitOutput(src, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return nil, "", err
	}
	out, err := gitOutput(src, "ls-tree", "-r", "-z", "--full-tree", "HEAD")
	if err != nil {
		return nil, "", err
	}
	files := map[string]string{}
	for _, entry := range strings.Split(string(out), "\x00") {
		// "<mode> <type> <id>\t<path>"
		meta, p, ok := strings.Cut(entry, "\t")
		fields := strings.Fields(meta)
		if ok && len(fields) == 3 && fields[1] == "blob" && fields[0] != "120000" && isCourseFile(p) {
			files[p] = fields[2]
		}
	}
	return files, strings.TrimSpace(string(commit)), nil
}

// gitOutput runs git in dir. It is the course's tool, not the student's
// code: its output is not capped, so that a long listing or a large blob
// comes back whole.
//
// dir may be a student's repository, and the grader may run as root: git
// must not run anything that repository's configuration names. So the
// settings that start programs while objects are read are switched off on
// the command line (which outranks the repository's config), and a partial
// clone is not read at all: its missing objects would be fetched from a
// remote the repository chose, with a transport it chose (ext:: runs any
// command). What the grader reads, it checks against the blob ids anyway.
func gitOutput(dir string, args ...string) ([]byte, error) {
	if partialClone(dir) {
		return nil, fmt.Errorf("%s is a partial clone: the grader does not read its objects (a missing one would be fetched by a command the repository names)", dir)
	}
	return gitRun(dir, args...)
}

// gitSafety are the settings every git command of the grader runs with.
var gitSafety = []string{
	"-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "core.sshCommand=false",
	"-c", "protocol.allow=never", "-c", "protocol.ext.allow=never", "-c", "protocol.file.allow=never",
	"-c", "protocol.git.allow=never", "-c", "protocol.ssh.allow=never", "-c", "protocol.http.allow=never",
	"-c", "protocol.https.allow=never",
}

func gitRun(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", slices.Concat([]string{"-C", dir}, gitSafety, args)...)
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "GIT_NO_LAZY_FETCH=1", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=false", "SSH_ASKPASS=false", "GIT_PROTOCOL_FROM_USER=0")
	// The repository is the student's: a blob or a tree of gigabytes (git
	// compresses zeros well) is refused, as readTreeFile refuses a file.
	out := &cappedBuffer{max: maxGitOutput}
	cmd.Stdout = out
	// git's own words, kept short, say why it failed (a report or a test
	// that only said "exit status 128" could not be diagnosed).
	errOut := &cappedBuffer{max: 1 << 10}
	cmd.Stderr = errOut
	if err := cmd.Run(); err != nil {
		if out.over {
			return nil, fmt.Errorf("git %s in %s printed more than %d bytes: refused", strings.Join(args, " "), dir, maxGitOutput)
		}
		return nil, fmt.Errorf("git %s in %s: %w: %s", strings.Join(args, " "), dir, err, strings.TrimSpace(string(errOut.b)))
	}
	return out.b, nil
}

// maxGitOutput bounds what the grader reads of one git command: the
// course's list of files, or one of its files.
const maxGitOutput = 16 * maxTreeFile

// cappedBuffer collects a command's output up to max bytes; past it, the
// write fails, which ends the command (a broken pipe).
type cappedBuffer struct {
	b    []byte
	max  int
	over bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if len(c.b)+len(p) > c.max {
		c.over = true
		return 0, errors.New("output past its bound")
	}
	c.b = append(c.b, p...)
	return len(p), nil
}

// partialClone reports whether dir's repository fetches missing objects
// on demand (a promisor remote or a partial-clone filter).
func partialClone(dir string) bool {
	out, _ := gitRun(dir, "config", "--get-regexp", `^(extensions\.partialclone|remote\..*\.(promisor|partialclonefilter))$`)
	return len(strings.TrimSpace(string(out))) > 0
}
