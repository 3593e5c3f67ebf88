package web

import (
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Docroot is the folder the server serves (-d). Every file is opened through
// an os.Root, which refuses any path that leaves the folder, by ".." or by a
// symbolic link, at the moment of opening: there is no window between a check
// and the open for a link to change in.
type Docroot struct {
	dir  string
	root *os.Root

	// The solution's fast path (see open): the folder as a file descriptor
	// for openat2(2), opened on first use.
	once  sync.Once
	dirfd int
	fdErr error
}

// OpenDocroot opens dir as a document root.
func OpenDocroot(dir string) (*Docroot, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &Docroot{dir: dir, root: root}, nil
}

// Close releases the root.
func (d *Docroot) Close() error {
	if d.dirfd > 0 {
		unix.Close(d.dirfd)
	}
	return d.root.Close()
}

// Target is what a request URI names: an open regular file under the root.
// The caller must Close it.
type Target struct {
	Name  string      // slash-separated path under the root, e.g. "docs/index.html"
	Path  string      // the same file as a path on disk (for running a CGI program)
	Query string      // the part of the URI after '?', for QUERY_STRING
	CGI   bool        // the path contains "cgi": run it instead of sending it
	File  *os.File    // the open file
	Info  fs.FileInfo // its size and mode, from the open file
}

// Close closes the target's file.
func (t *Target) Close() error { return t.File.Close() }

// Open maps a request URI to an open file under the root:
//
//   - the query (after '?') is cut off into Target.Query;
//   - the path is percent-decoded (a bad escape is 400);
//   - a path that does not start with '/', or that has a ".." element
//     (literally or as %2e%2e), or that is absolute after its first '/', is
//     403: it would leave the root;
//   - a path ending in '/' means its index.html;
//   - a missing file is 404; a symbolic link out of the root, or anything
//     that is not a regular file (a folder, a device), is 403.
//
// A path containing "cgi" is marked CGI.
func (d *Docroot) Open(uri string) (*Target, error) {
	name, query, err := splitURI(uri)
	if err != nil {
		return nil, err
	}
	f, err := d.open(name)
	if err != nil {
		return nil, openError(name, err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, openError(name, err)
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, statusErrorf(403, "%s is not a regular file", name)
	}
	return &Target{
		Name:  name,
		Path:  filepath.Join(d.dir, filepath.FromSlash(name)),
		Query: query,
		CGI:   strings.Contains(name, "cgi"),
		File:  f,
		Info:  info,
	}, nil
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
func (d *Docroot) open(name string) (*os.File, error) {
	d.once.Do(func() {
		d.dirfd, d.fdErr = unix.Open(d.dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	})
	if d.fdErr != nil {
		return d.root.Open(filepath.FromSlash(name))
	}
	how := unix.OpenHow{Flags: unix.O_RDONLY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS}
	for {
		fd, err := unix.Openat2(d.dirfd, name, &how)
		switch {
		case err == nil:
			return os.NewFile(uintptr(fd), name), nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM):
			return d.root.Open(filepath.FromSlash(name)) // no openat2 here, or a seccomp filter forbids it
		default:
			return nil, &os.PathError{Op: "openat2", Path: name, Err: err}
		}
	}
}

// splitURI turns a request URI into a local, slash-separated name under the
// root and a query.
func splitURI(uri string) (name, query string, err error) {
	rawPath, query, _ := strings.Cut(uri, "?")
	if !strings.HasPrefix(rawPath, "/") {
		return "", "", statusErrorf(403, "%q is not a path under the document root", uri)
	}
	p, err := url.PathUnescape(rawPath)
	if err != nil {
		return "", "", &StatusError{Code: 400, Msg: "bad percent-encoding in " + uri, Err: err}
	}
	name = p[1:]
	if name == "" || strings.HasSuffix(name, "/") {
		name += "index.html"
	}
	for _, elem := range strings.Split(name, "/") {
		if elem == ".." {
			return "", "", statusErrorf(403, "%q leaves the document root", uri)
		}
	}
	if !filepath.IsLocal(filepath.FromSlash(name)) || strings.ContainsRune(name, 0) {
		return "", "", statusErrorf(403, "%q is not a path under the document root", uri)
	}
	return name, query, nil
}

// openError turns an error from opening name into the status it deserves:
// 404 when there is no such file, 403 for everything else (no permission, a
// link out of the root, a path through a file).
func openError(name string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return &StatusError{Code: 404, Msg: "server could not find " + name, Err: err}
	}
	return &StatusError{Code: 403, Msg: "server could not read " + name, Err: err}
}
