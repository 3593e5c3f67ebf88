// Package procstat samples a process's CPU use and memory from Linux's /proc,
// as the original chat write-up's monitor_server.py did: CPU% from utime+stime
// in /proc/<pid>/stat, VmRSS and the thread count from /proc/<pid>/status, and
// PSS from /proc/<pid>/smaps_rollup.
//
// RSS counts every page the process maps, including shared libraries that
// other processes also use; PSS divides each shared page among its users, so
// it is the fairer measure of what one server costs — the number the chapters
// compare per connection.
//
// The parsers work on any text; reading /proc needs Linux (elsewhere Read
// returns an error wrapping errors.ErrUnsupported).
package procstat

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ClockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat. It
// is 100 on every Linux architecture: the kernel converts to it for /proc
// whatever its internal HZ, because user space relies on it.
const ClockTicks = 100

// ErrExited is returned when the process is gone (or never was) or is a
// zombie: it has nothing left to sample.
var ErrExited = errors.New("process not running")

// Stat is what procstat reads from /proc/<pid>/stat.
type Stat struct {
	State   byte   // R, S, D, Z (zombie), …
	UTime   uint64 // user CPU time, in ClockTicks
	STime   uint64 // system CPU time, in ClockTicks
	Threads int
}

// ParseStat parses the one line of /proc/<pid>/stat. The command name (field
// 2) is in parentheses and may itself contain spaces and parentheses, so the
// fields are counted from the last ')'.
func ParseStat(data []byte) (Stat, error) {
	end := bytes.LastIndexByte(data, ')')
	if end < 0 {
		return Stat{}, fmt.Errorf("procstat: stat %q: no command name", data)
	}
	// After ')' comes field 3 (state) of proc(5), so field n is at index n-3:
	// utime is field 14, stime 15, num_threads 20.
	fields := bytes.Fields(data[end+1:])
	const state, utime, stime, threads = 0, 14 - 3, 15 - 3, 20 - 3
	if len(fields) <= threads || len(fields[state]) != 1 {
		return Stat{}, fmt.Errorf("procstat: stat %q: too few fields", data)
	}
	var s Stat
	var err error
	s.State = fields[state][0]
	if s.UTime, err = strconv.ParseUint(string(fields[utime]), 10, 64); err != nil {
		return Stat{}, fmt.Errorf("procstat: stat utime: %w", err)
	}
	if s.STime, err = strconv.ParseUint(string(fields[stime]), 10, 64); err != nil {
		return Stat{}, fmt.Errorf("procstat: stat stime: %w", err)
	}
	if s.Threads, err = strconv.Atoi(string(fields[threads])); err != nil {
		return Stat{}, fmt.Errorf("procstat: stat num_threads: %w", err)
	}
	return s, nil
}

// Status is what procstat reads from /proc/<pid>/status.
type Status struct {
	RSSKiB     int64 // VmRSS; 0 for a kernel thread, which has no memory of its own
	PeakRSSKiB int64 // VmHWM, the most VmRSS has been since the process started
	Threads    int
}

// ParseStatus parses /proc/<pid>/status ("VmRSS:\t    5120 kB" lines).
func ParseStatus(data []byte) (Status, error) {
	var s Status
	var sawThreads bool
	err := eachField(data, func(key string, value []byte) error {
		var err error
		switch key {
		case "VmRSS":
			s.RSSKiB, err = parseKiB(value)
		case "VmHWM":
			s.PeakRSSKiB, err = parseKiB(value)
		case "Threads":
			s.Threads, err = strconv.Atoi(string(bytes.TrimSpace(value)))
			sawThreads = true
		}
		return err
	})
	if err == nil && !sawThreads {
		err = errors.New("procstat: status has no Threads line")
	}
	return s, err
}

// ParseSmapsRollup returns the Pss line of /proc/<pid>/smaps_rollup, in KiB.
func ParseSmapsRollup(data []byte) (pssKiB int64, err error) {
	found := false
	err = eachField(data, func(key string, value []byte) error {
		if key != "Pss" {
			return nil
		}
		found = true
		pssKiB, err = parseKiB(value)
		return err
	})
	if err == nil && !found {
		err = errors.New("procstat: smaps_rollup has no Pss line")
	}
	return pssKiB, err
}

// eachField calls fn with every "Key: value" line of data.
func eachField(data []byte, fn func(key string, value []byte) error) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		key, value, ok := bytes.Cut(sc.Bytes(), []byte(":"))
		if !ok {
			continue
		}
		if err := fn(string(key), value); err != nil {
			return fmt.Errorf("procstat: %s: %w", key, err)
		}
	}
	return sc.Err()
}

// parseKiB parses "    5120 kB".
func parseKiB(value []byte) (int64, error) {
	num, ok := bytes.CutSuffix(bytes.TrimSpace(value), []byte(" kB"))
	if !ok {
		return 0, fmt.Errorf("%q is not in kB", value)
	}
	return strconv.ParseInt(string(bytes.TrimSpace(num)), 10, 64)
}

// Snapshot is a process's counters at one instant, as Read returns them.
type Snapshot struct {
	Time       time.Time
	CPUTicks   uint64 // utime + stime since the process started, in ClockTicks
	RSSKiB     int64
	PeakRSSKiB int64 // VmHWM, the most RSS has been since the process started
	PSSKiB     int64 // -1 when smaps_rollup is not readable (another user's process)
	Threads    int
}

// CPUPercent returns the CPU the process used between two snapshots, in
// percent of one CPU: 100 means one core busy, 200 two.
func CPUPercent(prev, cur Snapshot) float64 {
	wall := cur.Time.Sub(prev.Time).Seconds()
	if wall <= 0 || cur.CPUTicks < prev.CPUTicks {
		return 0
	}
	cpu := float64(cur.CPUTicks-prev.CPUTicks) / ClockTicks
	return 100 * cpu / wall
}
