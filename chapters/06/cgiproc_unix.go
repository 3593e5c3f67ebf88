//go:build unix

package web

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// isolate makes cmd the leader of a process group of its own, and makes
// cancelling its context (the time limit, a client gone, the server closing)
// kill the whole group: a CGI program that started children of its own (a
// shell script's commands, a background job) cannot leave them running.
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd) }
}

// killGroup kills every process left in cmd's process group. It reports
// os.ErrProcessDone when there is none.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}
