package web

import (
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Docroot is the folder the server serves (-d). Every file is opened through
// an os.Root, which refuses any path that leaves the folder, by ".." or by a
// symbolic link, at the moment of opening: there is no window between a check
// and the open for a link to change in.
type Docroot struct {
	dir  string
	root *os.Root
	fast fastOpener // the solution's fast path where there is one (docroot_linux.go)
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
	d.fast.close()
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
//     that is not a regular file (a folder, a device, a named pipe), is 403.
//
// The file is opened with O_NONBLOCK and judged by the open file's Stat: a
// named pipe (FIFO) in the folder would otherwise block the open itself until
// some process opened it for writing, and hang the worker before any check
// could run.
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

// openRoot opens name, a local slash-separated path, through the os.Root:
// read-only, and with O_NONBLOCK, so that a named pipe cannot block the open.
func (d *Docroot) openRoot(name string) (*os.File, error) {
	return d.root.OpenFile(filepath.FromSlash(name), os.O_RDONLY|syscall.O_NONBLOCK, 0)
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
	for elem := range strings.SplitSeq(name, "/") { // an iterator: no slice to allocate
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
