package grade

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A student's repository may be a partial clone whose promisor remote is
// ext::<any command>: reading a missing object would run that command, as
// the grader's user (root, for an instructor). The grader must neither run
// it nor read such a repository; with the partial-clone check bypassed, its
// git settings alone must still keep the command from running.
func TestGitRunsNothingTheRepositoryNames(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	for _, args := range [][]string{
		{"init", "-q", "."},
		{"config", "core.repositoryformatversion", "1"},
		{"config", "extensions.partialClone", "evil"},
		{"config", "remote.evil.url", "ext::sh -c touch% " + marker},
		{"config", "remote.evil.promisor", "true"},
		{"config", "protocol.ext.allow", "always"},
		{"config", "core.fsmonitor", "touch " + marker},
	} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	const missing = "0123456789012345678901234567890123456789"
	if _, err := gitOutput(dir, "cat-file", "blob", missing); err == nil || !strings.Contains(err.Error(), "partial clone") {
		t.Errorf("gitOutput in a partial clone: err = %v, want a refusal that names the partial clone", err)
	}
	for _, args := range [][]string{{"cat-file", "blob", missing}, {"ls-files"}, {"status", "--short"}} {
		gitRun(dir, args...) // fails: the object is missing; it must fail without fetching
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("git %s ran the command the repository's configuration names (lazy fetch over ext:: or core.fsmonitor)", strings.Join(args, " "))
		}
	}
}
