//go:build unix

package grade

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"serverlab/tests/judge"
)

// judged reports whether this platform runs exercises as a judge and a
// subject: where Unix sockets carry descriptors.
const judged = true

// subjectProc is the student's side of one judged run: the chapter's test
// binary serving its Impl values to the judge over a socket pair.
type subjectProc struct {
	cmd        *exec.Cmd
	judgeEnd   *os.File    // the judge's end of the socket, for its ExtraFiles
	scratch    string      // the folder judge and subject share in a sandbox ("": none)
	box        *subjectBox // what bounds the subject: its scratch folder's size, its memory
	net        *netns      // the network judge and subject share (nil: the machine's)
	tellPID    *os.File    // the judge's pid pipe, written once the subject has started
	subjectEnd *os.File    // the subject's, until it has started
	out        *limitedBuffer
	done       chan struct{}
	waitErr    error
}

// subjectGORACE makes the race detector end the subject at its first
// report, with a status of its own: the judge's check then fails where the
// race happened, and the grader names the cause from the status.
const subjectGORACE = "halt_on_error=1 exitcode=66"

// newSubject prepares the subject of ex and the socket pair that joins it
// to the judge; start starts it.
func (rn *runner) newSubject(ex exercise) (*subjectProc, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return nil, err
	}
	syscall.CloseOnExec(fds[0])
	syscall.CloseOnExec(fds[1])
	judgeEnd, subjectEnd := os.NewFile(uintptr(fds[0]), "judge"), os.NewFile(uintptr(fds[1]), "subject")
	s := &subjectProc{judgeEnd: judgeEnd, subjectEnd: subjectEnd, out: &limitedBuffer{max: 256 << 10}, done: make(chan struct{})}
	s.cmd = exec.Command(ex.binary)
	s.cmd.Dir = ex.pkgDir
	id, err := judge.SocketID(subjectEnd)
	if err != nil {
		judgeEnd.Close()
		subjectEnd.Close()
		return nil, err
	}
	s.cmd.Env = append(withGORACE(subjectEnv(rn.env), subjectGORACE), judge.RoleEnv+"="+judge.Subject, judge.SocketIDEnv+"="+id)
	s.cmd.ExtraFiles = []*os.File{subjectEnd} // fd 3
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if !sandboxAvailable() {
		if err := rn.asStudent(s.cmd); err != nil {
			judgeEnd.Close()
			subjectEnd.Close()
			return nil, err
		}
		return s, nil
	}
	// Judge and subject share a scratch folder, the only one the subject
	// may write (see sandbox_linux.go).
	if s.scratch, err = os.MkdirTemp(rn.tmp, "scratch-"); err != nil {
		judgeEnd.Close()
		subjectEnd.Close()
		return nil, err
	}
	spec := sandboxSpec{Visible: []string{rn.root}, Binary: ex.binary, Writable: s.scratch, Dir: ex.pkgDir, UID: -1, GID: -1}
	if rn.user != nil {
		spec.UID, spec.GID = int(rn.user.uid), int(rn.user.gid)
	}
	if s.box, err = newSubjectBox(s.scratch, spec.UID, spec.GID); err != nil {
		judgeEnd.Close()
		subjectEnd.Close()
		return nil, err
	}
	spec.Cgroup = s.box.cgroup
	if rn.user != nil {
		_ = rn.user.own(s.scratch)
	}
	s.cmd.Env = append(s.cmd.Env, "TMPDIR="+s.scratch, "HOME="+s.scratch)
	inOwnProcessGroup(s.cmd)
	if err := sandboxed(s.cmd, spec); err != nil {
		judgeEnd.Close()
		subjectEnd.Close()
		s.box.release()
		return nil, err
	}
	// And a network of their own, where the grader can make one (see
	// netns_linux.go).
	if netnsAvailable() {
		if s.net, err = newNetns(); err != nil {
			judgeEnd.Close()
			subjectEnd.Close()
			s.box.release()
			return nil, err
		}
	}
	return s, nil
}

// startJudge starts the judge of this subject, in the network they share.
func (s *subjectProc) startJudge(cmd *exec.Cmd) error {
	return s.net.do(func() error { return startTracked(cmd) })
}

// start starts the subject, after its judge, in the network they share; the
// grader then lets go of that network, which ends with their processes.
func (s *subjectProc) start() error {
	err := s.net.do(func() error { return startTracked(s.cmd) })
	s.net.close()
	s.subjectEnd.Close()
	if err != nil {
		close(s.done)
		return err
	}
	go func() {
		s.waitErr = waitTracked(s.cmd)
		close(s.done)
	}()
	return nil
}

// awaitProtected waits (a second at most) until the judge of pid has made
// itself undumpable, which Linux shows as its /proc files passing to root:
// only then is the subject, which may run as the same user, started.
func awaitProtected(pid int) {
	if runtime.GOOS != "linux" {
		return
	}
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		fi, err := os.Stat("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil {
			return // it has ended already
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid == 0 {
			return
		}
		time.Sleep(time.Millisecond) // polling the judge's start-up, which has no other signal
	}
}

// withGORACE adds options to the environment's GORACE (the caller's own
// options stay, and later ones win).
// subjectEnv is the part of the grader's environment the student's code
// gets: what a Go program and its children need to run (the search path,
// the locale and time zone, the Go runtime's and the course's own
// settings), never the rest — an instructor's tokens, agent sockets and
// cloud credentials are the grader's user's, and a failure message would
// print them into the report.
func subjectEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "PATH", name == "LANG", name == "TZ", name == "TMPDIR", name == "HOME",
			strings.HasPrefix(name, "LC_"), strings.HasPrefix(name, "GO"), strings.HasPrefix(name, "SERVERLAB_"):
			out = append(out, kv)
		}
	}
	return out
}

func withGORACE(env []string, opts string) []string {
	out := make([]string, 0, len(env)+1)
	gorace := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GORACE="); ok {
			gorace = v
			continue
		}
		out = append(out, kv)
	}
	return append(out, "GORACE="+strings.TrimSpace(gorace+" "+opts))
}

// finish waits a moment for the subject to end by itself (the judge has
// closed its end), then kills its process group, and reports how it ended.
func (s *subjectProc) finish(grace time.Duration) SubjectRun {
	s.net.close()
	if s.cmd.Process == nil {
		s.subjectEnd.Close()
		s.box.release()
		return SubjectRun{ExitCode: -1}
	}
	select {
	case <-s.done:
	case <-time.After(grace):
	}
	_ = killGroup(s.cmd)
	<-s.done
	r := SubjectRun{Output: s.out.String(), ExitCode: 0, Limit: s.box.release()}
	var exitErr *exec.ExitError
	if errors.As(s.waitErr, &exitErr) {
		r.ExitCode = exitErr.ExitCode()
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.Signal = ws.Signal().String()
			if ws.Signal() == syscall.SIGXFSZ && r.Limit == "" {
				r.Limit = "its file size limit (" + sizeText(int64(subjectFileSize)) + " a file)"
			}
		}
	}
	if st := s.cmd.ProcessState; st != nil {
		r.CPU = st.UserTime() + st.SystemTime()
	}
	return r
}
