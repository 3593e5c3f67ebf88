package rooms

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// conventionSince is the last commit made before the commit convention
// was checked: every commit after it follows CONTRIBUTING.md's rule. (The
// history before it is kept as it is; rewriting it would break every
// clone.)
const conventionSince = "abcc29d"

// maxSubject is CONTRIBUTING.md's limit on a commit subject: what git's
// one-line views and most mail clients show without cutting.
const maxSubject = 72

// areaPrefix is a subject's `area: ` — a word, a path or a few of them
// separated by commas or slashes — before the colon.
var areaPrefix = regexp.MustCompile(`^[A-Za-z0-9_.,/{}* -]+: \S`)

// TestCommitSubjects holds the history since conventionSince to the commit
// convention: a subject of at most 72 characters of the form `area: what`.
// Merge commits need only the length. It is skipped where there is no
// history to read (a release tarball, a shallow clone without that commit).
func TestCommitSubjects(t *testing.T) {
	if err := exec.Command("git", "cat-file", "-e", conventionSince+"^{commit}").Run(); err != nil {
		t.Skipf("no git history reaching %s here (a release or a shallow clone)", conventionSince)
	}
	out, err := exec.Command("git", "log", "--format=%h%x00%p%x00%s", conventionSince+"..HEAD").Output()
	if err != nil {
		t.Fatalf("git log: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		f := strings.SplitN(line, "\x00", 3)
		hash, parents, subject := f[0], strings.Fields(f[1]), f[2]
		if n := len([]rune(subject)); n > maxSubject {
			t.Errorf("commit %s: subject is %d characters, the limit is %d (CONTRIBUTING.md): %q\n"+
				"\treword it before it reaches main: git rebase -i, or git commit --amend", hash, n, maxSubject, subject)
		}
		if len(parents) < 2 && !areaPrefix.MatchString(subject) {
			t.Errorf("commit %s: subject %q is not `area: what` (CONTRIBUTING.md)", hash, subject)
		}
	}
}
