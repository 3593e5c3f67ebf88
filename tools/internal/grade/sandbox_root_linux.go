package grade

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// The subject's root is an allow-list: a file system of its own (tmpfs) into
// which only what a test binary needs is put, each piece read-only and at its
// own path, and then becomes its root (pivot_root). Hiding places by a list
// of them (the cover mode, sandbox_linux.go's lockDown) leaves whatever the
// list forgot: an instructor's -course copy under /srv, a checkout under
// /opt, once read by a subject and printed into its report. Here what is not
// named below is not there.

// systemTrees are the system's programs and libraries: a -race test binary
// is linked dynamically (the loader and libc under /lib*, /usr/lib*), and
// chapter 06 starts programs (/bin/sh is the suite's non-executable script's
// interpreter). A name that is a symbolic link on the host (/bin ->
// usr/bin on a merged /usr) is the same link in the sandbox.
var systemTrees = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// etcFiles are the /etc a subject gets: what the dynamic loader and name
// resolution on loopback read (the checks dial 127.0.0.1 and localhost), and
// the time zone. No passwd, no resolv.conf, no host keys: nothing names the
// machine's users or its other networks.
var etcFiles = []string{"ld.so.cache", "ld.so.conf", "nsswitch.conf", "host.conf", "hosts", "gai.conf",
	"services", "protocols", "localtime"}

// devFiles are the devices a program may use; devLinks the usual links.
var (
	devFiles = []string{"null", "zero", "full", "random", "urandom"}
	devLinks = map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1",
		"stderr": "/proc/self/fd/2"}
)

// graft is one piece of the root: a detached copy of a host path (from
// open_tree), to be put at the same path in the new root.
type graft struct {
	path string
	fd   int
	dir  bool
}

// buildRoot makes the subject's root and enters it. The new tmpfs is
// mounted over the scratch folder's own path (its copy is taken first), so
// that making the skeleton writes nothing to the host's disks; every copy of
// a host tree is made read-only and nosuid before it is put in, so that a
// mount point that would have to be made inside one fails (EROFS) instead of
// creating a folder on the host.
func buildRoot(spec sandboxSpec) (err error) {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	var grafts []graft
	defer func() {
		for _, g := range grafts {
			if g.fd >= 0 {
				unix.Close(g.fd)
			}
		}
	}()
	links := map[string]string{} // path -> target, for the system's top-level links
	take := func(path string, writable bool) error {
		fi, err := os.Stat(path)
		if err != nil {
			return err
		}
		fd, err := unix.OpenTree(unix.AT_FDCWD, path, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		if err != nil {
			return fmt.Errorf("copy %s: %w", path, err)
		}
		grafts = append(grafts, graft{path: filepath.Clean(path), fd: fd, dir: fi.IsDir()})
		attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOSUID}
		if !writable {
			attr.Attr_set |= unix.MOUNT_ATTR_RDONLY
		}
		if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, attr); err != nil {
			return fmt.Errorf("read-only %s: %w", path, err)
		}
		return nil
	}
	for _, p := range systemTrees {
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
			continue
		case fi.Mode()&os.ModeSymlink != 0:
			if links[p], err = os.Readlink(p); err != nil {
				return err
			}
		case fi.IsDir():
			if err := take(p, false); err != nil {
				return err
			}
		}
	}
	for _, name := range etcFiles {
		if err := take("/etc/"+name, false); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	for _, name := range devFiles {
		if err := take("/dev/"+name, true); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	for _, p := range spec.Visible {
		if err := take(p, false); err != nil {
			return err
		}
	}
	if spec.Binary != "" {
		if err := take(spec.Binary, false); err != nil {
			return err
		}
	}
	if err := take(spec.Writable, true); err != nil {
		return err
	}

	// The new root, over the scratch folder's path.
	root := spec.Writable
	if err := unix.Mount("tmpfs", root, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=1m"); err != nil {
		return fmt.Errorf("make the root: %w", err)
	}
	at := func(p string) string { return filepath.Join(root, p) }
	for _, d := range []string{"/etc", "/dev", "/proc", "/tmp"} {
		if err := os.Mkdir(at(d), 0o755); err != nil {
			return err
		}
	}
	// A /tmp of its own, before the grafts that may lie under the host's
	// /tmp (the grader's scratch folders do) are put into it.
	if err := unix.Mount("tmpfs", at("/tmp"), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777,size=64m"); err != nil {
		return fmt.Errorf("make /tmp: %w", err)
	}
	// Parents before children: the checkout before a scratch folder inside
	// it, so that the child's copy is not covered by its parent's.
	slices.SortStableFunc(grafts, func(a, b graft) int {
		return cmp.Compare(strings.Count(a.path, "/"), strings.Count(b.path, "/"))
	})
	for i, g := range grafts {
		dst := at(g.path)
		if err := mountPoint(dst, g.dir); err != nil {
			return fmt.Errorf("put %s in the root: %w", g.path, err)
		}
		if err := unix.MoveMount(g.fd, "", unix.AT_FDCWD, dst, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return fmt.Errorf("put %s in the root: %w", g.path, err)
		}
		unix.Close(g.fd)
		grafts[i].fd = -1
	}
	for p, target := range links {
		if err := os.Symlink(target, at(p)); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
	}
	for name, target := range devLinks {
		if err := os.Symlink(target, at("/dev/"+name)); err != nil {
			return err
		}
	}
	if err := unix.Mount("proc", at("/proc"), "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount the namespace's /proc: %w", err)
	}

	if err := enterRoot(root); err != nil {
		return err
	}
	// Everything read-only but the scratch folder, /tmp and the devices
	// (whose copies were made writable: /dev/null is written).
	ro := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(-1, "/", 0, ro); err != nil {
		return fmt.Errorf("read-only /: %w", err)
	}
	if err := unix.MountSetattr(-1, "/proc", 0, ro); err != nil {
		return fmt.Errorf("read-only /proc: %w", err)
	}
	return nil
}

// mountPoint makes the folder or empty file a copy is mounted on, unless it
// is there already (a path inside another copy: the same host file).
func mountPoint(p string, dir bool) error {
	if _, err := os.Lstat(p); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if dir {
		return os.Mkdir(p, 0o755)
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// enterRoot makes root the process's root: pivot_root, the old root then
// detached, so that no path leads back to it. Where the kernel refuses
// pivot_root (a root that is the initial ramfs, say), chroot: the old root
// stays in the namespace, but the subject, holding no capability, cannot
// chroot out of its own.
func enterRoot(root string) error {
	if err := os.Chdir(root); err != nil {
		return err
	}
	if perr := unix.PivotRoot(".", "."); perr == nil {
		if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
			return fmt.Errorf("detach the old root: %w", err)
		}
	} else if err := unix.Chroot("."); err != nil {
		return fmt.Errorf("enter the root (pivot_root: %v): chroot: %w", perr, err)
	}
	return os.Chdir("/")
}
