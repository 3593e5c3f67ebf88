package grade

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSandboxRootIsAnAllowList plants a file where a deny-list forgot to
// look (/opt, /srv, /mnt, /var/lib, a new top-level folder, the host's /tmp)
// and runs a shell as a subject is run: none of them is there, while what a
// test binary needs is (the loader and libc, /dev/null and /dev/urandom,
// localhost in /etc/hosts, a writable /tmp, its own /proc, its binary, its
// checkout and its scratch folder). A checkout under /opt and an
// instructor's -course copy under /srv were once read so and printed into a
// report.
func TestSandboxRootIsAnAllowList(t *testing.T) {
	if !sandboxAvailable() {
		t.Skip("this system does not let the grader make namespaces")
	}
	if st := sandboxProbe(); st.cover {
		t.Skipf("this kernel refused the subject a root of its own (%s): the sandbox covers places instead", st.why)
	}
	secret := "serverlab-sandbox-secret-" + filepath.Base(t.TempDir())
	var planted []string
	plant := func(dir string) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Logf("cannot plant under %s (%v): not checked", dir, err)
			return
		}
		f, err := os.CreateTemp(dir, "serverlab-sandbox-*")
		if err != nil {
			t.Logf("cannot plant under %s (%v): not checked", dir, err)
			return
		}
		_, _ = f.WriteString(secret)
		f.Close()
		_ = os.Chmod(f.Name(), 0o644)
		planted = append(planted, f.Name())
		t.Cleanup(func() { os.Remove(f.Name()) })
	}
	for _, d := range []string{"/opt", "/srv", "/mnt", "/var/lib", os.TempDir()} {
		plant(d)
	}
	top := "/serverlab-sandbox-" + filepath.Base(t.TempDir())
	if err := os.Mkdir(top, 0o755); err == nil {
		t.Cleanup(func() { os.RemoveAll(top) })
		plant(top)
	}
	if len(planted) == 0 {
		t.Skip("nowhere to plant a file")
	}

	checkout, scratch := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(checkout, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := sandboxSpec{Visible: []string{checkout}, Writable: scratch, Dir: checkout, UID: -1, GID: -1}
	if os.Geteuid() == 0 {
		u, err := LookupUser("nobody")
		if err != nil {
			t.Skip("no user nobody to drop to")
		}
		spec.UID, spec.GID = int(u.uid), int(u.gid)
		if err := u.own(scratch); err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{checkout, filepath.Dir(checkout), scratch, filepath.Dir(scratch)} {
			_ = os.Chmod(d, 0o755)
		}
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	// $1 the scratch folder; then the planted files.
	script := `s="$1"; shift; ` +
		`for f in "$@"; do [ -e "$f" ] && echo "sees:$f"; (cat "$f") 2>/dev/null | grep -q serverlab-sandbox-secret && echo "reads:$f"; done; ` +
		`[ -e /etc/passwd ] && echo sees:/etc/passwd; ` +
		`[ -e /proc/1/cmdline ] || echo no:proc; ` +
		`echo x > /dev/null || echo no:dev-null; ` +
		`[ "$(head -c 4 /dev/urandom | wc -c)" -eq 4 ] || echo no:urandom; ` +
		`getent hosts localhost >/dev/null || echo no:localhost; ` +
		`(echo x > /tmp/mine) 2>/dev/null || echo no:tmp; ` +
		`(echo x > "$s/mine") 2>/dev/null || echo no:scratch; ` +
		`[ -f go.mod ] || echo no:checkout; ` +
		`(echo x > go.mod) 2>/dev/null && echo wrote:checkout; ` +
		`(echo x > /usr/serverlab) 2>/dev/null && echo wrote:usr; ` +
		`echo root: $(ls -A /)`
	cmd := exec.Command(sh, append([]string{"-c", script, "sh", scratch}, planted...)...)
	if err := sandboxed(cmd, spec); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sandboxed shell: %v\n%s", err, out)
	}
	var wrong []string
	var root []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if r, ok := strings.CutPrefix(line, "root: "); ok {
			root = strings.Fields(r)
			continue
		}
		wrong = append(wrong, line)
	}
	if len(wrong) > 0 {
		t.Errorf("in the sandbox the shell said:\n\t%s\nwant nothing: the planted files (%s) are not there, "+
			"/proc, /dev/null, /dev/urandom, localhost, /tmp, the scratch folder and the checkout are; "+
			"only /tmp and the scratch folder are writable (sandbox_root_linux.go)",
			strings.Join(wrong, "\n\t"), strings.Join(planted, ", "))
	}
	allowed := []string{"bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "sbin", "tmp", "usr",
		strings.Split(strings.TrimPrefix(checkout, "/"), "/")[0], strings.Split(strings.TrimPrefix(scratch, "/"), "/")[0]}
	var extra []string
	for _, name := range root {
		if !slices.Contains(allowed, name) {
			extra = append(extra, name)
		}
	}
	if len(extra) > 0 {
		t.Errorf("the sandbox's / holds %q besides what a subject needs; want only some of %q", extra, allowed)
	}
}
