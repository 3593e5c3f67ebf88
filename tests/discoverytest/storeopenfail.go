package discoverytest

import (
	"errors"
	"os"
	"path/filepath"
	"sync"

	"serverlab/tests/testkit"
	"serverlab/tools/given/users"
)

// checkOpenFailureCloses: when OpenStore fails after it opened the users
// file (its Stat fails, or mending the last line fails), it returns the
// error and closes the file it opened. A store that returns the error and
// keeps the file leaks a descriptor per try: a server restarted in a loop
// by a supervisor, or a test that opens stores, runs out of them.
func checkOpenFailureCloses(k *testkit.T, impl Impl) {
	k.Helper()
	for _, c := range []struct {
		what, content string
		fail          string // the operation that fails
	}{
		{"the file's Stat fails", "alice pass123 127.0.0.1 54321\n", "stat"},
		{"the last line is torn and cutting it off (Truncate) fails", "alice pass123 127.0.0.1 54321\nbob sec", "truncate"},
		{"the last line is torn and the Sync after cutting it off fails", "alice pass123 127.0.0.1 54321\nbob sec", "sync"},
		{"the last line lacks its '\\n' and writing it fails", "alice pass123 127.0.0.1 54321\nbob secret 127.0.0.1 54322", "write"},
	} {
		path := filepath.Join(k.TempDir(), "users.txt")
		if err := testkit.WriteFile(path, []byte(c.content), 0o600); err != nil {
			k.Fatalf("writing %s: %v", path, err)
		}
		var opened []*failingOpFile
		s, err := impl.OpenStore(path, func(p string) (users.AppendFile, error) {
			f, err := openAppend(p)
			if err != nil {
				return nil, err
			}
			ff := &failingOpFile{AppendFile: f, fail: c.fail}
			opened = append(opened, ff)
			return ff, nil
		})
		if err == nil {
			s.Close()
			k.Fatalf("exercise 1.3: OpenStore on a file of %q where %s (injected)\n  want: the error\n   got: "+
				"a store (it would append to a file it could not mend)", c.content, c.what)
		}
		for _, f := range opened {
			if !f.isClosed() {
				f.AppendFile.Close()
				k.Fatalf("exercise 1.3: OpenStore on a file of %q where %s (injected)\n  want: the error, and the "+
					"file it opened closed\n   got: %v, and the file left open\n"+
					"hint: close the file on every error return after opening it (a descriptor leaks per failed open)",
					c.content, c.what, err)
			}
		}
	}
}

// failingOpFile is a users file whose named operation (stat, truncate,
// sync, write) fails, and which records whether it was closed.
type failingOpFile struct {
	users.AppendFile
	fail string

	mu     sync.Mutex
	closed bool
}

var errInjectedOp = errors.New("injected failure (an I/O error)")

func (f *failingOpFile) Stat() (os.FileInfo, error) {
	if f.fail == "stat" {
		return nil, errInjectedOp
	}
	return f.AppendFile.Stat()
}

func (f *failingOpFile) Truncate(size int64) error {
	if f.fail == "truncate" {
		return errInjectedOp
	}
	return f.AppendFile.Truncate(size)
}

func (f *failingOpFile) Sync() error {
	if f.fail == "sync" {
		return errInjectedOp
	}
	return f.AppendFile.Sync()
}

func (f *failingOpFile) Write(p []byte) (int, error) {
	if f.fail == "write" {
		return 0, errInjectedOp
	}
	return f.AppendFile.Write(p)
}

func (f *failingOpFile) Close() error {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	return f.AppendFile.Close()
}

func (f *failingOpFile) isClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}
