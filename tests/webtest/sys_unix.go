//go:build unix

package webtest

import (
	"syscall"

	"serverlab/tests/testkit"
)

// mkfifo makes a named pipe at path, in a scratch folder (testkit.Mkfifo).
func mkfifo(path string) error { return testkit.Mkfifo(path, 0o644) }

// kill kills process pid.
func kill(pid int) { syscall.Kill(pid, syscall.SIGKILL) }
