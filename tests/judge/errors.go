//go:build unix

package judge

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"serverlab/tools/given/lab"
)

// sentinels are the errors both processes know by name: errors.Is against
// one of them works across the socket.
var sentinels = struct {
	sync.Mutex
	names []string
	errs  []error
}{}

// Sentinel registers err under name in both processes (a suite registers its
// package's errors in an init function, so that the judge and the subject,
// which link the same suites, know the same names).
func Sentinel(name string, err error) {
	sentinels.Lock()
	defer sentinels.Unlock()
	sentinels.names = append(sentinels.names, name)
	sentinels.errs = append(sentinels.errs, err)
}

func init() {
	for name, err := range map[string]error{
		"io.EOF": io.EOF, "io.ErrUnexpectedEOF": io.ErrUnexpectedEOF, "io.ErrShortWrite": io.ErrShortWrite,
		"io.ErrClosedPipe": io.ErrClosedPipe, "io.ErrNoProgress": io.ErrNoProgress, "io.ErrShortBuffer": io.ErrShortBuffer,
		"net.ErrClosed": net.ErrClosed, "os.ErrDeadlineExceeded": os.ErrDeadlineExceeded,
		"fs.ErrNotExist": fs.ErrNotExist, "fs.ErrExist": fs.ErrExist, "fs.ErrPermission": fs.ErrPermission,
		"fs.ErrClosed": fs.ErrClosed, "fs.ErrInvalid": fs.ErrInvalid,
		"context.Canceled": context.Canceled, "context.DeadlineExceeded": context.DeadlineExceeded,
		"lab.ErrNotImplemented": lab.ErrNotImplemented, "lab.ErrServerClosed": lab.ErrServerClosed,
		"errLost": errLost,
	} {
		Sentinel(name, err)
	}
}

// errValue is an error on the socket.
type errValue struct {
	ID        string   // the error's identity: the sender's id for it
	Text      string   // err.Error()
	Is        []string // the ids and sentinel names errors.Is matches
	Errno     uint64   // a syscall.Errno in its chain (+1; 0: none)
	Timeout   bool     // a net.Error that timed out
	Temporary bool
}

// remoteError is an error that came from the other process.
type remoteError struct {
	v     *errValue
	table *errTable
}

func (e *remoteError) Error() string { return e.v.Text }
func (e *remoteError) Timeout() bool { return e.v.Timeout }

// Temporary is net.Error's, kept for the checks that still ask.
func (e *remoteError) Temporary() bool { return e.v.Temporary }

// Is reports what the sender's errors.Is said of the error against target.
func (e *remoteError) Is(target error) bool {
	if errno, ok := target.(syscall.Errno); ok && e.v.Errno != 0 {
		return syscall.Errno(e.v.Errno-1) == errno
	}
	id, ok := e.table.idOf(target)
	if !ok {
		return false
	}
	for _, is := range e.v.Is {
		if is == id {
			return true
		}
	}
	return false
}

// As finds the syscall.Errno in the error's chain.
func (e *remoteError) As(target any) bool {
	if p, ok := target.(*syscall.Errno); ok && e.v.Errno != 0 {
		*p = syscall.Errno(e.v.Errno - 1)
		return true
	}
	return false
}

// errTable gives errors ids, so that one process can ask of an error what
// the other's errors.Is said.
type errTable struct {
	mu   sync.Mutex
	side string
	next int
	byID map[string]error // every error sent or received, and the sentinels
	ids  map[error]string // the same, by comparable error value
}

func (t *errTable) init(side string) {
	t.side = side
	t.byID = map[string]error{}
	t.ids = map[error]string{}
	sentinels.Lock()
	defer sentinels.Unlock()
	for i, err := range sentinels.errs {
		t.add(sentinels.names[i], err)
	}
}

func (t *errTable) add(id string, err error) {
	t.byID[id] = err
	if comparable(err) {
		if _, ok := t.ids[err]; !ok {
			t.ids[err] = id
		}
	}
}

func comparable(err error) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	_ = map[error]bool{err: true}
	return true
}

func (t *errTable) idOf(err error) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !comparable(err) {
		return "", false
	}
	id, ok := t.ids[err]
	return id, ok
}

// encode describes err for the other process.
func (t *errTable) encode(err error) *errValue {
	v := &errValue{Text: err.Error()}
	if errno, ok := err.(syscall.Errno); ok {
		v.ID = "errno:" + strconv.FormatUint(uint64(errno), 10)
		v.Errno = uint64(errno) + 1
		return v
	}
	t.mu.Lock()
	if id, ok := t.ids[err]; ok && comparable(err) {
		v.ID = id
	} else {
		t.next++
		v.ID = t.side + strconv.Itoa(t.next)
		t.add(v.ID, err)
	}
	known := make(map[string]error, len(t.byID))
	for id, k := range t.byID {
		known[id] = k
	}
	t.mu.Unlock()
	// errors.Is may call a remoteError's Is, which takes t.mu.
	for id, k := range known {
		if errors.Is(err, k) {
			v.Is = append(v.Is, id)
		}
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		v.Errno = uint64(errno) + 1
	}
	var ne net.Error
	if errors.As(err, &ne) {
		v.Timeout = ne.Timeout()
	}
	return v
}

// decode returns the error v describes: the very error, if it was this
// process's to begin with.
func (t *errTable) decode(v *errValue) error {
	boundErr(t.side, v)
	if n, ok := strings.CutPrefix(v.ID, "errno:"); ok {
		if errno, err := strconv.ParseUint(n, 10, 64); err == nil {
			return syscall.Errno(errno)
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err, ok := t.byID[v.ID]; ok {
		if re, remote := err.(*remoteError); !remote || re.v.Text == v.Text {
			return err
		}
	}
	re := &remoteError{v: v, table: t}
	t.add(v.ID, re)
	return re
}
