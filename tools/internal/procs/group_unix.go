//go:build unix

package procs

import (
	"os/exec"
	"syscall"
)

func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// signalGroup signals the process group whose leader is pid.
func signalGroup(pid int, sig syscall.Signal) error { return syscall.Kill(-pid, sig) }
