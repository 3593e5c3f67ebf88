//go:build !unix

package web

import "os/exec"

// isolate does nothing here: without process groups, cancelling the context
// kills the program itself (exec.CommandContext's default), and cmd.WaitDelay
// still bounds the wait for a child that holds its output.
func isolate(cmd *exec.Cmd) {}

// killGroup does nothing without process groups.
func killGroup(cmd *exec.Cmd) error { return nil }
