package grade

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestSandbox runs a shell in the sandbox a subject runs in (as nobody when
// the test runs as root): it is pid 1 of its own namespace, sees no other
// process in /proc (this test's, say), may write its scratch folder and
// nothing else, and does not see the files beside it.
func TestSandbox(t *testing.T) {
	if !sandboxAvailable() {
		t.Skip("this system does not let the grader make namespaces")
	}
	outside, scratch := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := sandboxSpec{Writable: scratch, Dir: scratch, UID: -1, GID: -1}
	if os.Geteuid() == 0 {
		u, err := LookupUser("nobody")
		if err != nil {
			t.Skip("no user nobody to drop to")
		}
		spec.UID, spec.GID = int(u.uid), int(u.gid)
		if err := u.own(scratch); err != nil {
			t.Fatal(err)
		}
	}
	script := `echo $$; [ -e /proc/` + strconv.Itoa(os.Getpid()) + ` ] && echo sees-host-process; ` +
		`echo ok > "$1/mine" && echo wrote-scratch; (echo bad > "$2/theirs") 2>/dev/null && echo wrote-outside; ` +
		`(cat "$3") 2>/dev/null && echo read-outside; (echo bad > /etc/serverlab-sandbox) 2>/dev/null && echo wrote-etc; true`
	cmd := exec.Command("/bin/sh", "-c", script, "sh", scratch, outside, secret)
	if err := sandboxed(cmd, spec); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sandboxed shell: %v\n%s", err, out)
	}
	if got, want := strings.Join(strings.Fields(string(out)), " "), "1 wrote-scratch"; got != want {
		t.Fatalf("in the sandbox the shell said %q; want %q: pid 1 of its namespace, its scratch folder writable, "+
			"no other file writable, and the folder beside it (another checkout's) not there", got, want)
	}
	if _, err := os.Stat(filepath.Join(outside, "theirs")); err == nil {
		t.Fatal("the sandboxed shell wrote outside its scratch folder")
	}
}
