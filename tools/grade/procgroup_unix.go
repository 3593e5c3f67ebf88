//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// inOwnProcessGroup makes cmd the leader of a new process group and makes
// cancelling it kill the whole group: test2json, the test binary and anything
// the binary started. A hung test cannot then outlive its grade.
func inOwnProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd) }
}

// killGroup kills cmd's process group. After a normal exit it sweeps up
// anything the test left running; then there is usually nothing to kill.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
