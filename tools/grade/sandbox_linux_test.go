package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSandbox runs a shell in the sandbox a grader that is not root puts a
// subject in: it may write its scratch folder and nothing else, and it is
// the first process of its own PID namespace. (As root the grader uses an
// unprivileged -user instead; run this test as an ordinary user.)
func TestSandbox(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("the sandbox is for a grader that is not root")
	}
	if !sandboxAvailable() {
		t.Skip("this system does not let an unprivileged user make namespaces")
	}
	outside := t.TempDir()
	scratch := t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("x"), 0o000); err != nil {
		t.Fatal(err)
	}
	script := `echo $$; echo ok > "$1/mine" && echo wrote-scratch; (echo bad > "$2/theirs") 2>/dev/null && echo wrote-outside; (cat "$3") 2>/dev/null && echo read-secret; true`
	cmd := exec.Command("/bin/sh", "-c", script, "sh", scratch, outside, secret)
	if err := sandboxed(cmd, scratch); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sandboxed shell: %v\n%s", err, out)
	}
	lines := strings.Fields(string(out))
	want := []string{"1", "wrote-scratch"}
	if strings.Join(lines, " ") != strings.Join(want, " ") {
		t.Fatalf("in the sandbox the shell said %q; want %q (pid 1 of its namespace, the scratch folder "+
			"writable, nothing else, and a file of mode 000 unreadable)", lines, want)
	}
	if _, err := os.Stat(filepath.Join(outside, "theirs")); err == nil {
		t.Fatal("the sandboxed shell wrote outside its scratch folder")
	}
}
