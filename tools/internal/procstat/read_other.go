//go:build !linux

package procstat

import (
	"errors"
	"fmt"
)

// Read needs Linux's /proc; elsewhere it reports that it cannot sample.
func Read(pid int) (Snapshot, error) {
	return Snapshot{}, fmt.Errorf("procstat: sampling pid %d needs Linux's /proc: %w", pid, errors.ErrUnsupported)
}
