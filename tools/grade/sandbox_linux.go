package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// The sandbox of a subject run by a grader that is not root (a student's
// own make grade, an instructor grading as themselves): new user, mount
// and PID namespaces, in which every file system is read-only but the
// exercise's scratch folder. The student's code can then write none of the
// user's files (the Go build cache that later builds come from, the
// grader's binaries, the course), and sees and signals no process outside
// its own. The grader starts itself with sandboxFlag as the namespaces'
// first process, which makes the mounts and then becomes the subject.
const sandboxFlag = "-sandbox-exec"

// sandboxAvailable reports, once, whether this system lets an unprivileged
// user make the namespaces (some distributions forbid it).
var sandboxAvailable = sync.OnceValue(func() bool {
	if os.Geteuid() == 0 {
		return false // root grades with an unprivileged -user instead
	}
	self, err := os.Executable()
	if err != nil {
		return false
	}
	cmd := exec.Command(self, sandboxFlag, os.TempDir(), "--", "/bin/true")
	sandboxCmd(cmd)
	return cmd.Run() == nil
})

// sandboxCmd makes cmd start in the namespaces.
func sandboxCmd(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// The user is root in the namespaces, so that the first process may
	// mount; it gives up every capability before it becomes the subject.
	cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID
	cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
	cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	cmd.SysProcAttr.GidMappingsEnableSetgroups = false
}

// sandboxed rewrites cmd to run its program in the sandbox, with writable
// the only folder it may write.
func sandboxed(cmd *exec.Cmd, writable string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd.Args = append([]string{self, sandboxFlag, writable, "--", cmd.Path}, cmd.Args[1:]...)
	cmd.Path = self
	sandboxCmd(cmd)
	return nil
}

// runSandboxExec is the namespaces' first process: args are the writable
// folder, "--" and the program with its arguments, which it becomes.
func runSandboxExec(args []string) {
	if len(args) < 3 || args[1] != "--" {
		fmt.Fprintln(os.Stderr, "grade: usage: "+sandboxFlag+" DIR -- PROGRAM [ARGS]")
		os.Exit(2)
	}
	runtime.LockOSThread() // credentials are a thread's: set and exec on one
	if err := lockDown(args[0]); err != nil {
		fmt.Fprintln(os.Stderr, "grade: sandbox:", err)
		os.Exit(3)
	}
	if err := dropCapabilities(); err != nil {
		fmt.Fprintln(os.Stderr, "grade: sandbox:", err)
		os.Exit(3)
	}
	err := syscall.Exec(args[2], args[2:], os.Environ())
	fmt.Fprintln(os.Stderr, "grade: sandbox: exec:", err)
	os.Exit(3)
}

// lockDown makes every mount read-only but writable.
func lockDown(writable string) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	if err := unix.Mount(writable, writable, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", writable, err)
	}
	ro := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(-1, "/", unix.AT_RECURSIVE, ro); err != nil {
		return fmt.Errorf("read-only /: %w", err)
	}
	rw := &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(-1, writable, unix.AT_RECURSIVE, rw); err != nil {
		return fmt.Errorf("writable %s: %w", writable, err)
	}
	return nil
}

// dropCapabilities leaves the namespaces' root no power over files: no
// capability now, none regained at exec (securebits), so that the subject's
// file access is the user's own, permission bits and all.
func dropCapabilities() error {
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
