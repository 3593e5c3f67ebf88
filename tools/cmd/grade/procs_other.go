//go:build !unix

package main

import (
	"errors"
	"os/exec"
)

// Where process groups do not exist, cancelling a run kills the test binary
// only (exec's default).
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}

type credential struct{ name string }

func lookupUser(name string) (*credential, error) {
	return nil, errors.New("-user is supported on Unix only")
}

func (rn *runner) asStudent(cmd *exec.Cmd) error { return nil }

func (c *credential) own(path string) error { return nil }

func studentUser(given *credential) (*credential, string) { return given, "" }
