package main

import (
	"os/exec"
	"sync"
)

// The grader's own children, so that a sweep for escaped processes never
// mistakes one of them for an orphan. Starting a process and noting its pid
// happen under one lock, which the sweep also takes.
var children struct {
	mu   sync.Mutex
	pids map[int]bool
}

// startTracked starts cmd and remembers it as the grader's child until
// waitTracked.
func startTracked(cmd *exec.Cmd) error {
	children.mu.Lock()
	defer children.mu.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	if children.pids == nil {
		children.pids = map[int]bool{}
	}
	children.pids[cmd.Process.Pid] = true
	return nil
}

// waitTracked waits for cmd and forgets it.
func waitTracked(cmd *exec.Cmd) error {
	err := cmd.Wait()
	children.mu.Lock()
	delete(children.pids, cmd.Process.Pid)
	children.mu.Unlock()
	return err
}

// outputTracked is cmd.CombinedOutput for a tracked child.
func outputTracked(cmd *exec.Cmd, combined bool) ([]byte, error) {
	var buf limitedBuffer
	cmd.Stdout = &buf
	if combined {
		cmd.Stderr = &buf
	}
	if err := startTracked(cmd); err != nil {
		return nil, err
	}
	err := waitTracked(cmd)
	return []byte(buf.String()), err
}
