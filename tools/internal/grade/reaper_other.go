//go:build !linux

package grade

// Only Linux has child subreapers; elsewhere each run's process group is
// killed, and a process that left its group is beyond the grader's reach.
func becomeSubreaper() error { return nil }

func sweepOrphans() {}
