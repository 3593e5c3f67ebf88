//go:build !unix

package procs

import (
	"os"
	"os/exec"
	"syscall"
)

// Without process groups Spec.Group only signals the process itself.
func ownGroup(*exec.Cmd) {}

func signalGroup(pid int, sig syscall.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Signal(sig)
}
