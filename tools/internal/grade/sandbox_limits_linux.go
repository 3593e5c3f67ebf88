package grade

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// What a subject may consume. The sandbox once bounded what the subject may
// see and write, not how much: cheater5 (A) wrote 300 MiB into its scratch
// folder on the host's disk, allocated 1.5 GiB (6.3 GB of RSS under -race's
// shadow memory, nobody stopped it), and ran with no limit on processes or
// file size; and (J) in the non-root flow a folder it made r-x kept its 100
// MiB on the disk after every grading, since RemoveAll cannot empty it. So
// each subject gets limits honest work never meets, each of which ends it
// with a cause that names the limit (subjectEnd):
//
//   - memory: a memory cgroup of its own (v1 or v2), where the grader may make
//     one (as root, here): -race's shadow is charged too, which is why this is
//     a cgroup and not RLIMIT_AS or RLIMIT_DATA (the race runtime reserves
//     terabytes of address space at start: either limit stops every -race
//     binary before main);
//   - its scratch folder: for a grader running as root, a tmpfs of its own
//     mounted on the folder (size-bounded, shared with its judge, gone when
//     unmounted); a grader that is not root cannot mount one its judge sees,
//     so there only the file size is bounded;
//   - the size of one file (RLIMIT_FSIZE: the kernel ends the writer with
//     SIGXFSZ) and the number of tasks (RLIMIT_NPROC: fork and thread
//     creation fail past it), in both flows;
//   - no core files (RLIMIT_CORE 0);
//
// and its scratch folder is removed when the exercise ends, permission bits
// first made the owner's again (removeTree), so that nothing it wrote
// outlives its exercise.
var (
	subjectMemory   int64  = 2 << 30   // the memory cgroup's limit, -race's shadow included
	scratchSize     int64  = 2 << 30   // the tmpfs of a root grader's scratch folder: JetStream (08) reserves 75% of what statfs says is free, and its stream 1 GiB of it
	subjectFileSize uint64 = 256 << 20 // RLIMIT_FSIZE
	subjectTasks    uint64 = 4096      // RLIMIT_NPROC: processes and threads
)

// limitSelf is run by the sandbox's first process (runSandboxExec) before
// it builds the root, while it still sees /sys: it joins the memory cgroup
// the grader made and lowers its limits, which the subject inherits across
// exec. A limit is never raised above what the grader itself was given.
func limitSelf(spec sandboxSpec) error {
	if spec.Cgroup != "" {
		if err := os.WriteFile(filepath.Join(spec.Cgroup, "cgroup.procs"), []byte("0"), 0); err != nil {
			return fmt.Errorf("join the memory cgroup: %w", err)
		}
	}
	for _, l := range []struct {
		name string
		res  int
		max  uint64
	}{{"file size", unix.RLIMIT_FSIZE, spec.FileSize}, {"tasks", unix.RLIMIT_NPROC, spec.Tasks}, {"core", unix.RLIMIT_CORE, 0}} {
		var old unix.Rlimit
		if err := unix.Getrlimit(l.res, &old); err != nil {
			return fmt.Errorf("limit %s: %w", l.name, err)
		}
		lim := unix.Rlimit{Cur: min(l.max, old.Max), Max: min(l.max, old.Max)}
		if err := unix.Setrlimit(l.res, &lim); err != nil {
			return fmt.Errorf("limit %s: %w", l.name, err)
		}
	}
	return nil
}

// subjectBox is what the grader made to hold one subject: its scratch
// folder (a tmpfs of its own if mounted) and its memory cgroup ("" if none).
type subjectBox struct {
	scratch string
	mounted bool
	cgroup  string
	v2      bool
	once    sync.Once
	limit   string
}

// newSubjectBox bounds the scratch folder dir (a tmpfs of scratchSize, the
// user's, where the grader is root) and makes a memory cgroup for the
// subject where it can. Neither is required: where the system refuses them,
// the subject runs with its rlimits alone, and the report's note says what
// bounds it (limitsNote).
func newSubjectBox(dir string, uid, gid int) (*subjectBox, error) {
	b := &subjectBox{scratch: dir}
	if os.Geteuid() == 0 {
		opts := fmt.Sprintf("mode=0700,size=%d", scratchSize)
		if uid >= 0 {
			opts += fmt.Sprintf(",uid=%d,gid=%d", uid, gid)
		}
		// Best effort: a root without CAP_SYS_ADMIN (a container's) keeps
		// the folder on its disk, bounded only file by file.
		b.mounted = unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts) == nil
	}
	b.cgroup, b.v2 = newMemoryCgroup()
	return b, nil
}

var cgroupSeq atomic.Int64

// newMemoryCgroup makes a memory cgroup of subjectMemory under the grader's
// own (cgroup v2's unified hierarchy, else v1's memory controller), or
// returns "" where the grader may not (not root, or no memory controller):
// the report's note then says memory is not bounded.
func newMemoryCgroup() (dir string, v2 bool) {
	parent, v2 := ownMemoryCgroup()
	if parent == "" {
		return "", false
	}
	dir = filepath.Join(parent, fmt.Sprintf("serverlab-subject-%d-%d", os.Getpid(), cgroupSeq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", false
	}
	limit := strconv.FormatInt(subjectMemory, 10)
	var files []string
	if v2 {
		files = []string{"memory.max", limit, "memory.swap.max", "0"}
	} else {
		files = []string{"memory.limit_in_bytes", limit}
	}
	for i := 0; i < len(files); i += 2 {
		if err := os.WriteFile(filepath.Join(dir, files[i]), []byte(files[i+1]), 0); err != nil && i == 0 {
			_ = os.Remove(dir)
			return "", false
		}
	}
	return dir, v2
}

// ownMemoryCgroup is the folder of the grader's own memory cgroup: v2's if
// its controllers name memory, else v1's.
var ownMemoryCgroup = sync.OnceValues(func() (string, bool) {
	if os.Geteuid() != 0 {
		return "", false
	}
	raw, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", false
	}
	for _, v2 := range []bool{true, false} {
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			parts := strings.SplitN(sc.Text(), ":", 3)
			if len(parts) != 3 {
				continue
			}
			var base string
			switch {
			case v2 && parts[0] == "0" && parts[1] == "":
				base = "/sys/fs/cgroup"
			case !v2 && strings.Contains(","+parts[1]+",", ",memory,"):
				base = "/sys/fs/cgroup/memory"
			default:
				continue
			}
			for _, dir := range []string{filepath.Join(base, parts[2]), base} {
				probe := "memory.limit_in_bytes"
				if v2 {
					probe = "memory.max"
					if c, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control")); err != nil ||
						!strings.Contains(" "+strings.TrimSpace(string(c))+" ", " memory ") {
						continue
					}
				} else if _, err := os.Stat(filepath.Join(dir, probe)); err != nil {
					continue
				}
				return dir, v2
			}
		}
	}
	return "", false
})

// release ends what the box holds once the subject has ended: every process
// left in its cgroup is killed and the cgroup removed, the tmpfs unmounted,
// the scratch folder removed. It returns the limit the subject went over
// ("" if none the kernel recorded). It is safe to call more than once.
func (b *subjectBox) release() string {
	if b == nil {
		return ""
	}
	b.once.Do(func() {
		if b.cgroup != "" {
			if n := cgroupOOMKills(b.cgroup, b.v2); n > 0 {
				b.limit = "its memory limit (" + sizeText(subjectMemory) + ", the race detector's shadow memory included)"
			}
			if procs, err := os.ReadFile(filepath.Join(b.cgroup, "cgroup.procs")); err == nil {
				for _, f := range strings.Fields(string(procs)) {
					if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
						_ = unix.Kill(pid, unix.SIGKILL)
					}
				}
			}
			_ = os.Remove(b.cgroup) // rmdir: fails only while a killed process is still ending
		}
		if b.mounted {
			_ = unix.Unmount(b.scratch, unix.MNT_DETACH)
		}
		_ = removeTree(b.scratch)
	})
	return b.limit
}

// cgroupOOMKills is how many of the cgroup's processes the kernel killed for
// going over its memory limit.
func cgroupOOMKills(dir string, v2 bool) int {
	file := "memory.oom_control"
	if v2 {
		file = "memory.events"
	}
	raw, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// limitsNote says, for the report, what bounds a subject on this machine.
func limitsNote() string {
	note := fmt.Sprintf("each exercise's code is limited to %s a file and %d tasks", sizeText(int64(subjectFileSize)), subjectTasks)
	if os.Geteuid() == 0 {
		note += fmt.Sprintf(", a scratch folder of %s", sizeText(scratchSize))
	}
	if dir, _ := ownMemoryCgroup(); dir != "" {
		return note + fmt.Sprintf(" and %s of memory (a cgroup)", sizeText(subjectMemory))
	}
	return note + "; its memory is not bounded (no memory cgroup the grader may make)"
}
