package web

import (
	"errors"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// fastOpener is the solution's fast path (see open): the folder as a file
// descriptor for openat2(2), opened on first use.
type fastOpener struct {
	once  sync.Once
	dirfd int
	err   error
}

func (o *fastOpener) close() {
	if o.dirfd > 0 {
		unix.Close(o.dirfd)
	}
}

// open opens name, a local slash-separated path, under the root.
//
// It asks the kernel directly, with openat2(2) and RESOLVE_BENEATH: the same
// guarantee as os.Root (no "..", no symbolic link, leads out of the folder),
// checked by the kernel during the lookup. It is also cheaper: os.Root.Open
// makes an *os.File that first tries to register the file with the network
// poller (four fcntl calls and a failing epoll_ctl), while os.NewFile of a
// blocking descriptor costs one fcntl. Where openat2 is missing (Linux before
// 5.6, some sandboxes), it falls back to os.Root.
//
// Like openRoot it opens with O_NONBLOCK, so that a named pipe cannot block
// the open. Then it switches the descriptor back to blocking mode with one
// fcntl(F_SETFL) — the flags it was opened with are known, so there is no
// F_GETFL to read them first — before wrapping it: reads of a regular file
// never wait anyway, and os.NewFile of a blocking descriptor does not try to
// register it with the network poller (a failing epoll_ctl). Open judges the
// file by its Stat next and refuses anything but a regular file without
// reading from it, so a named pipe left in blocking mode never blocks anyone.
func (d *Docroot) open(name string) (*os.File, error) {
	o := &d.fast
	o.once.Do(func() {
		o.dirfd, o.err = unix.Open(d.dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	})
	if o.err != nil {
		return d.openRoot(name)
	}
	how := unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NONBLOCK,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	for {
		fd, err := unix.Openat2(o.dirfd, name, &how)
		switch {
		case err == nil:
			unix.FcntlInt(uintptr(fd), unix.F_SETFL, unix.O_RDONLY) // clears O_NONBLOCK
			return os.NewFile(uintptr(fd), name), nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM):
			return d.openRoot(name) // no openat2 here, or a seccomp filter forbids it
		default:
			return nil, &os.PathError{Op: "openat2", Path: name, Err: err}
		}
	}
}
