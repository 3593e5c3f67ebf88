//go:build linux

package procstat

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// Read takes a Snapshot of process pid. It returns an error wrapping ErrExited
// if the process is gone or a zombie.
func Read(pid int) (Snapshot, error) {
	dir := fmt.Sprintf("/proc/%d/", pid)
	now := time.Now()
	statData, err := os.ReadFile(dir + "stat")
	if err != nil {
		return Snapshot{}, gone(pid, err)
	}
	stat, err := ParseStat(statData)
	if err != nil {
		return Snapshot{}, err
	}
	if stat.State == 'Z' || stat.State == 'X' {
		return Snapshot{}, fmt.Errorf("procstat: pid %d: %w", pid, ErrExited)
	}
	statusData, err := os.ReadFile(dir + "status")
	if err != nil {
		return Snapshot{}, gone(pid, err)
	}
	status, err := ParseStatus(statusData)
	if err != nil {
		return Snapshot{}, err
	}
	return Snapshot{
		Time:       now,
		CPUTicks:   stat.UTime + stat.STime,
		RSSKiB:     status.RSSKiB,
		PeakRSSKiB: status.PeakRSSKiB,
		PSSKiB:     readPSS(dir),
		Threads:    status.Threads,
	}, nil
}

// readPSS returns the process's PSS, or -1 if smaps_rollup cannot be read:
// it needs the right to ptrace the process, which another user's lacks, and
// kernels before 4.14 do not have it. RSS and CPU are still worth sampling.
func readPSS(dir string) int64 {
	data, err := os.ReadFile(dir + "smaps_rollup")
	if err != nil {
		return -1
	}
	pss, err := ParseSmapsRollup(data)
	if err != nil {
		return -1
	}
	return pss
}

// gone turns "no such file" (the process exited between two reads) into
// ErrExited and leaves other errors (e.g. no /proc) as they are.
func gone(pid int, err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("procstat: pid %d: %w", pid, ErrExited)
	}
	return fmt.Errorf("procstat: pid %d: %w", pid, err)
}
