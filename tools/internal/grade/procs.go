package grade

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
	// runs counts the exercise runs in progress (see beginRun).
	runs int
}

// beginRun notes that an exercise's test binary is about to run; the
// returned func ends the run and sweeps for orphans, but only once no other
// run is in progress. Orphans cannot be told apart by the run that made
// them (a process that double-forked belongs to no test's process group any
// more), so a sweep while another run is active would kill that run's own
// processes: a CGI program's background child, which the web suite's
// orphan check waits for, died of a parallel exercise's sweep, and three
// mutants of 6.4 passed. Grading ends with a final sweep in any case.
func beginRun() (end func()) {
	children.mu.Lock()
	children.runs++
	children.mu.Unlock()
	return func() {
		children.mu.Lock()
		children.runs--
		idle := children.runs == 0
		children.mu.Unlock()
		if idle {
			sweepOrphans()
		}
	}
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
