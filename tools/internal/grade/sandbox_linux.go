package grade

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// The sandbox a subject runs in: new mount and PID namespaces (and, for a
// grader that is not root, a new user namespace), in which
//
//   - its root is a file system of its own holding only what it needs, each
//     piece at its own path (sandbox_root_linux.go): the system's programs
//     and libraries, a few files of /etc, /dev's null, zero, full, random and
//     urandom, its own /proc and /tmp, the graded checkout, its binary and
//     its scratch folder. Anything else of the machine — another student's
//     checkout, the instructor's -course copy, /opt, /srv, /var/lib — is not
//     there to read. Where the kernel refuses that root, the sandbox falls
//     back to covering the places where other people's files live (/home,
//     /root, /tmp, /var/tmp, the checkout's top folder: lockDown), and the
//     report says so;
//   - every file system is read-only but the exercise's scratch folder, /tmp
//     and the devices: the student's code can write none of the user's files
//     (the Go build cache that later builds come from, the grader's
//     binaries, the course);
//   - it is the first process of its own PID namespace, with a /proc of that
//     namespace mounted afresh: it sees and signals no process outside (no
//     other student's command line, working folder or files through
//     /proc/PID/cwd), only its own;
//   - for a grader running as root, it is in a network namespace that only
//     it and its judge share (netns_linux.go: the grader makes it and starts
//     both in it, since the judge is no process of the sandbox's).
//
// The grader starts itself with sandboxFlag as the namespaces' first
// process, which makes the mounts, gives up its privileges (as root: it
// becomes the -user; otherwise: every capability) and becomes the subject.
const sandboxFlag = "-sandbox-exec"

// sandboxSpec is what the namespaces' first process is told.
type sandboxSpec struct {
	Visible  []string // read-only paths the subject needs (the checkout)
	Binary   string   // the program, read-only at its own path
	Writable string   // its scratch folder
	Dir      string   // its working directory
	UID, GID int      // the user to become (-1: stay, in a user namespace)
	Cover    bool     // the fallback: the machine's root with places covered (lockDown)
	Cgroup   string   // the memory cgroup to join ("": none; sandbox_limits_linux.go)
	FileSize uint64   // RLIMIT_FSIZE (0: subjectFileSize)
	Tasks    uint64   // RLIMIT_NPROC (0: subjectTasks)
}

// sandboxState is what this system lets the grader make, found once.
type sandboxState struct {
	ok    bool   // a sandbox at all
	cover bool   // only the fallback: the machine's root, places covered
	why   string // why the root of its own was refused (cover)
}

// sandboxProbe starts /bin/true in a root of its own, then, if the kernel
// refuses that, in the fallback (some distributions forbid unprivileged user
// namespaces altogether: then no sandbox).
var sandboxProbe = sync.OnceValue(func() sandboxState {
	dir, err := os.MkdirTemp("", "serverlab-sandbox-")
	if err != nil {
		return sandboxState{}
	}
	defer os.RemoveAll(dir)
	try := func(cover bool) (bool, string) {
		cmd := exec.Command("/bin/true")
		if err := sandboxedAs(cmd, sandboxSpec{Writable: dir, Dir: dir, UID: -1, GID: -1, Cover: cover}); err != nil {
			return false, err.Error()
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			return false, strings.TrimSpace(strings.TrimPrefix(FirstLines(out, 1), "grade: sandbox: ")) + " (" + err.Error() + ")"
		}
		return true, ""
	}
	ok, why := try(false)
	if ok {
		return sandboxState{ok: true}
	}
	if ok, _ := try(true); ok {
		return sandboxState{ok: true, cover: true, why: why}
	}
	return sandboxState{}
})

// sandboxAvailable reports whether this system lets the grader make the
// namespaces.
func sandboxAvailable() bool { return sandboxProbe().ok }

// sandboxSees says, for the report's note, what a subject's sandbox shows
// it of the machine.
func sandboxSees() string {
	st := sandboxProbe()
	if st.cover {
		return "this kernel refused it a root of its own (" + st.why + "), so it sees the machine's files but " +
			"/home, /root, /tmp, /var/tmp and the checkout's top folder (an instructor's files elsewhere, /opt or /srv, " +
			"it could read)"
	}
	return "its root holds only the system's programs and libraries, the checkout, its binary and its scratch folder"
}

// sandboxed rewrites cmd to run its program in the sandbox this system
// allows.
func sandboxed(cmd *exec.Cmd, spec sandboxSpec) error {
	spec.Cover = sandboxProbe().cover
	return sandboxedAs(cmd, spec)
}

// sandboxedAs rewrites cmd to run its program in the sandbox spec says.
func sandboxedAs(cmd *exec.Cmd, spec sandboxSpec) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	// The limits are the grader's figures, not the defaults of the binary
	// that reads the spec (a test's may differ).
	spec.FileSize, spec.Tasks = cmp.Or(spec.FileSize, subjectFileSize), cmp.Or(spec.Tasks, subjectTasks)
	b, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	cmd.Args = append([]string{self, sandboxFlag, string(b), "--", cmd.Path}, cmd.Args[1:]...)
	cmd.Path = self
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// An IPC namespace of its own: System V segments, semaphores and message
	// queues (and POSIX queues) a subject or its children make go with its
	// last process, where the host's would outlive the grading (cheater6 left
	// seven 64 MiB segments) and be shared between gradings.
	cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC
	if os.Geteuid() != 0 {
		// The user is root in its own user namespace, so that the first
		// process may mount; it gives up every capability before it
		// becomes the subject.
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
		cmd.SysProcAttr.GidMappingsEnableSetgroups = false
	}
	return nil
}

// runSandboxExec is the namespaces' first process: args are the spec, "--"
// and the program with its arguments, which it becomes.
func runSandboxExec(args []string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "grade: sandbox:", err)
		os.Exit(3)
	}
	if len(args) < 3 || args[1] != "--" {
		fail(fmt.Errorf("usage: %s SPEC -- PROGRAM [ARGS]", sandboxFlag))
	}
	var spec sandboxSpec
	if err := json.Unmarshal([]byte(args[0]), &spec); err != nil {
		fail(err)
	}
	runtime.LockOSThread() // credentials are a thread's: set them and exec on one
	// The Go runtime sizes GOMAXPROCS by the cgroup's CPU limit, which it
	// reads from /sys: a root of its own has none, so the subject would take
	// every core of the machine where the judge takes its limit. This
	// process still sees the machine's /sys; it hands its figure on.
	if os.Getenv("GOMAXPROCS") == "" {
		os.Setenv("GOMAXPROCS", strconv.Itoa(runtime.GOMAXPROCS(0)))
	}
	if err := limitSelf(spec); err != nil {
		fail(err)
	}
	enter := buildRoot
	if spec.Cover {
		enter = lockDown
	}
	if err := enter(spec); err != nil {
		fail(err)
	}
	if err := os.Chdir(spec.Dir); err != nil {
		fail(err)
	}
	if err := dropPrivileges(spec); err != nil {
		fail(err)
	}
	fail(fmt.Errorf("exec %s: %w", args[2], syscall.Exec(args[2], args[2:], os.Environ())))
}

// covered are the folders where other people's files live.
var covered = []string{"/home", "/root", "/tmp", "/var/tmp"}

// system are the top folders that are the system's, never covered.
var system = []string{"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/proc",
	"/run", "/sbin", "/sys", "/usr", "/var"}

// lockDown is the fallback where the kernel refuses buildRoot: the
// machine's root, with copies of the paths the subject needs made, then
// empty file systems over the places they and others' files are, the copies
// put back, and everything read-only but the scratch folder. What the list
// of places forgets (/opt, /srv) stays readable.
func lockDown(spec sandboxSpec) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	keep := slices.Concat(spec.Visible, []string{spec.Writable})
	if spec.Binary != "" {
		keep = append(keep, spec.Binary)
	}
	trees := make([]int, len(keep))
	hide := slices.Clone(covered)
	for i, p := range keep {
		fd, err := unix.OpenTree(unix.AT_FDCWD, p, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		if err != nil {
			return fmt.Errorf("copy %s: %w", p, err)
		}
		trees[i] = fd
		if top := topFolder(p); top != "" && !slices.Contains(system, top) && !slices.Contains(hide, top) {
			hide = append(hide, top)
		}
	}
	for _, d := range hide {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			continue
		}
		if err := unix.Mount("tmpfs", d, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=1m"); err != nil {
			return fmt.Errorf("cover %s: %w", d, err)
		}
	}
	for i, p := range keep {
		if err := mountPoint(p, p != spec.Binary); err != nil {
			return fmt.Errorf("put back %s: %w", p, err)
		}
		if err := unix.MoveMount(trees[i], "", unix.AT_FDCWD, p, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return fmt.Errorf("put back %s: %w", p, err)
		}
		unix.Close(trees[i])
	}
	// The host's /proc shows every process of the machine; this one, the
	// namespace's own.
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount the namespace's /proc: %w", err)
	}
	ro := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(-1, "/", unix.AT_RECURSIVE, ro); err != nil {
		return fmt.Errorf("read-only /: %w", err)
	}
	rw := &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(-1, spec.Writable, unix.AT_RECURSIVE, rw); err != nil {
		return fmt.Errorf("writable %s: %w", spec.Writable, err)
	}
	return nil
}

// topFolder is "/work" for "/work/main/chapters".
func topFolder(p string) string {
	p = filepath.Clean(p)
	if !filepath.IsAbs(p) || p == "/" {
		return ""
	}
	first, _, _ := strings.Cut(p[1:], "/")
	return "/" + first
}

// dropPrivileges becomes spec's user (a grader that is root), or leaves the
// user namespace's root no power over files: no capability now, none
// regained at exec (securebits), so that the user's own permission bits
// apply.
func dropPrivileges(spec sandboxSpec) error {
	if spec.UID >= 0 {
		if err := syscall.Setgroups(nil); err != nil {
			return err
		}
		if err := syscall.Setgid(spec.GID); err != nil {
			return err
		}
		return syscall.Setuid(spec.UID)
	}
	// linux/securebits.h: NOROOT and NO_SETUID_FIXUP, each locked, and
	// KEEP_CAPS locked off.
	const (
		noRoot              = 1 << 0
		noRootLocked        = 1 << 1
		noSetuidFixup       = 1 << 2
		noSetuidFixupLocked = 1 << 3
		keepCapsLocked      = 1 << 5
	)
	bits := noRoot | noRootLocked | noSetuidFixup | noSetuidFixupLocked | keepCapsLocked
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, uintptr(bits), 0, 0, 0); err != nil {
		return fmt.Errorf("securebits: %w", err)
	}
	for c := 0; c <= 63; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("drop capability %d: %w", c, err)
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	if err := unix.Capset(&hdr, &none[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

func init() {
	if len(os.Args) > 1 && os.Args[1] == sandboxFlag {
		runSandboxExec(os.Args[2:])
	}
}
