package webtest

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// adoptOrphans makes this process the child subreaper of everything it starts
// (PR_SET_CHILD_SUBREAPER), so that a process whose parent exits is
// re-parented to this process rather than to an ancestor of it. A check that
// watches an orphan needs that: otherwise the orphan belongs to whoever is the
// nearest subreaper above, the grader for one, which kills the orphans it
// finds whenever another of its runs ends, and so may kill the very process
// whose survival the check is about. The returned function undoes it, after
// reaping pid (if positive) should it be a child of ours by then.
func adoptOrphans() (release func(pid int), err error) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return nil, err
	}
	return func(pid int) {
		for pid > 0 {
			// ECHILD if it is not ours (never was re-parented, or reaped).
			_, err := syscall.Wait4(pid, nil, 0, nil)
			if !errors.Is(err, syscall.EINTR) {
				break
			}
		}
		unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
	}, nil
}
