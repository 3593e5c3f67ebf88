package grade

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSandboxIPC runs a subject that makes a System V shared-memory
// segment and ends without removing it, as chapter 06's CGI child may
// (cheater6, finding D: seven 64 MiB segments stayed on the host after
// grading). The sandbox gives the subject an IPC namespace of its own, which
// the kernel frees with its last process: the host's /proc/sysvipc/shm must
// not list the segment's key afterwards, and the subject's namespace must not
// be the host's.
func TestSandboxIPC(t *testing.T) {
	if !sandboxAvailable() {
		t.Skip("this system does not let the grader make namespaces")
	}
	perl, err := exec.LookPath("perl")
	if err != nil {
		t.Skip("no perl, whose shmget the subject calls")
	}
	scratch := t.TempDir()
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
	key := 0x5e7b0000 | os.Getpid()&0xffff
	hostNS, err := os.Readlink("/proc/self/ns/ipc")
	if err != nil {
		t.Skipf("no IPC namespace to compare with: %v", err)
	}
	script := `my $id = shmget($ARGV[0], 4096, 01666); defined $id or die "shmget: $!\n"; ` +
		`print "made\n", readlink("/proc/self/ns/ipc"), "\n";`
	cmd := exec.Command(perl, "-e", script, strconv.Itoa(key))
	if err := sandboxed(cmd, spec); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	defer removeShmKey(key) // before the fix the segment outlives the test
	if err != nil {
		t.Fatalf("sandboxed perl: %v\n%s", err, out)
	}
	lines := strings.Fields(string(out))
	if len(lines) != 2 || lines[0] != "made" {
		t.Fatalf("sandboxed perl said %q; want \"made\" and its IPC namespace", out)
	}
	if lines[1] == hostNS {
		t.Errorf("the subject's IPC namespace is the host's (%s): a segment it makes outlives the grading "+
			"(sandboxedAs must add CLONE_NEWIPC)", hostNS)
	}
	if id, ok := shmKeyOnHost(t, key); ok {
		t.Errorf("after the subject ended the host still holds its shared-memory segment (key %#x, shmid %d): "+
			"sent shmget from the sandbox, expected no segment, got one — the sandbox shares the host's IPC namespace",
			key, id)
	}
}

// shmKeyOnHost reports the host's segment with key, if /proc/sysvipc/shm
// lists one.
func shmKeyOnHost(t *testing.T, key int) (int, bool) {
	b, err := os.ReadFile("/proc/sysvipc/shm")
	if err != nil {
		t.Skipf("cannot read the host's segments: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != strconv.Itoa(key) {
			continue
		}
		id, err := strconv.Atoi(f[1])
		return id, err == nil
	}
	return 0, false
}

// removeShmKey removes the host's segment with key, which a sandbox without
// an IPC namespace of its own leaves behind.
func removeShmKey(key int) {
	id, err := unix.SysvShmGet(key, 0, 0)
	if err != nil {
		return
	}
	if _, err := unix.SysvShmCtl(id, unix.IPC_RMID, nil); err != nil {
		fmt.Fprintf(os.Stderr, "removing test segment %#x: %v\n", key, err)
	}
}
