//go:build !unix

package main

import "os/exec"

// inOwnProcessGroup is a no-op where process groups do not exist: cancelling
// the command kills test2json only (exec's default).
func inOwnProcessGroup(cmd *exec.Cmd) {}

func killGroup(cmd *exec.Cmd) error { return nil }
