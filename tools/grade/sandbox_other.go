//go:build !linux

package main

import (
	"errors"
	"os/exec"
)

// Namespaces are Linux's: elsewhere a grader that is not root runs the
// students' code as itself.
func sandboxAvailable() bool { return false }

func sandboxed(*exec.Cmd, string) error { return errors.New("no sandbox on this system") }
