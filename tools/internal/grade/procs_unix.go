//go:build unix

package grade

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"
)

// inOwnProcessGroup makes cmd the leader of a new process group, so that
// killGroup reaches the test binary and anything it started.
func inOwnProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// killGroup kills cmd's process group. After a normal exit it sweeps up
// anything the test left running; then there is usually nothing to kill.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// credential is the unprivileged user test binaries run as (-user).
type Credential struct {
	name     string
	uid, gid uint32
}

func LookupUser(name string) (*Credential, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("-user: %w", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("-user %s: uid %q gid %q are not numbers", name, u.Uid, u.Gid)
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("-user %s: only a grader running as root can run tests as another user", name)
	}
	return &Credential{name: name, uid: uint32(uid), gid: uint32(gid)}, nil
}

// asStudent makes cmd run in its own process group, as the -user if one was
// given.
func (rn *runner) asStudent(cmd *exec.Cmd) error {
	inOwnProcessGroup(cmd)
	if rn.user != nil {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: rn.user.uid, Gid: rn.user.gid, Groups: []uint32{}}
	}
	return nil
}

// own hands path to the user, so that the test binary can write it.
func (c *Credential) own(path string) error {
	return os.Chown(path, int(c.uid), int(c.gid))
}

// studentUser is the user the students' code runs as: the -user, or, for a
// grader running as root without one, nobody, so that no student's code
// ever runs with the grader's privileges (-user root asks for them). The
// note says so in the report.
func studentUser(given *Credential) (*Credential, string) {
	if given != nil {
		return given, "the students' code runs as the -user given" + sandboxNote(given)
	}
	if os.Geteuid() != 0 {
		if sandboxAvailable() {
			return nil, "the students' code runs in a sandbox of its own (Linux namespaces): " + sandboxSees() + "; it can write only its scratch folder and its own /tmp; " +
				limitsNote() + "; it shares this machine's network (it could reach any service on 127.0.0.1, yours and other gradings', " +
				"and any abstract Unix socket, such as a session bus or X11's, which may trust your user): " +
				"grade as root for a network of its own and a memory limit"
		}
		return nil, "the students' code runs as you, with no sandbox (this system allows no unprivileged namespaces): " +
			"it could write your files; grade as root (it then runs as nobody) for a grade that counts"
	}
	u, err := LookupUser("nobody")
	if err != nil {
		return nil, "the grader runs as root and found no user nobody: the students' code runs as root; pass -user"
	}
	return u, "the grader runs as root: the students' code runs as nobody (-user to choose another)" + sandboxNote(u)
}

func sandboxNote(*Credential) string {
	if !sandboxAvailable() {
		return ""
	}
	note := ", in a sandbox of its own (Linux namespaces): " + sandboxSees() + "; it writes only its scratch folder and its own /tmp; " + limitsNote()
	if netnsAvailable() {
		return note + ", and has a network of its own, loopback only, shared with its judge alone"
	}
	return note + "; it shares this machine's network (it could reach other gradings' servers on 127.0.0.1)"
}
