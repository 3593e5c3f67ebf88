//go:build unix

package webtest

import "syscall"

// mkfifo makes a named pipe at path.
func mkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }

// kill kills process pid.
func kill(pid int) { syscall.Kill(pid, syscall.SIGKILL) }
