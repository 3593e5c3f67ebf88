//go:build unix

package judge

import (
	"fmt"
	"os"
	"reflect"
	"sync"
	"syscall"
)

// The subject's side of a check that runs the code under test out of file
// descriptors: only the subject can use its own up.
var fillers struct {
	sync.Mutex
	files []*os.File
	old   *syscall.Rlimit
}

// exhaustFDs lowers the subject's descriptor limit to a little above what
// is open and opens /dev/null until none is left; it returns how many.
func exhaustFDs(highest int) (int, error) {
	fillers.Lock()
	defer fillers.Unlock()
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		return 0, err
	}
	low := old
	low.Cur = uint64(highest + 32)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		return 0, err
	}
	fillers.old = &old
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			return len(fillers.files), nil
		}
		fillers.files = append(fillers.files, f)
	}
}

// releaseFDs closes the fillers and restores the limit.
func releaseFDs() {
	fillers.Lock()
	defer fillers.Unlock()
	for _, f := range fillers.files {
		f.Close()
	}
	fillers.files = nil
	if fillers.old != nil {
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, fillers.old)
		fillers.old = nil
	}
}

// ExhaustFDs makes the subject run out of descriptors (highest: its
// highest open descriptor) and returns how many it opened to get there.
func ExhaustFDs(highest int) (int, error) {
	var n int
	var err error
	if cerr := callService("exhaustFDs", reflect.TypeFor[func(int) (int, error)](), []any{highest}, &n, &err); cerr != nil {
		return 0, cerr
	}
	return n, err
}

// ReleaseFDs undoes ExhaustFDs.
func ReleaseFDs() { _ = callService("releaseFDs", reflect.TypeFor[func()](), nil) }

// graderPID is the subject's pid as the grader gave it (descriptor 4), or 0
// when it gave none; this process's own when it is not the judge.
var graderPID = sync.OnceValue(func() int {
	if !IsJudge() {
		return os.Getpid()
	}
	if f := os.NewFile(PIDFD, "subject-pid"); f != nil {
		defer f.Close()
		var pid int
		if _, err := fmt.Fscan(f, &pid); err == nil && pid > 0 {
			return pid
		}
	}
	return 0
})

var subjectPID = sync.OnceValue(func() int {
	if pid := graderPID(); pid > 0 {
		return pid
	}
	var pid int
	_ = callService("pid", reflect.TypeFor[func() int](), nil, &pid)
	return pid
})

// SubjectPID is the process id of the code under test: the subject's (the
// grader's word for it), or this process's under go test.
func SubjectPID() int { return subjectPID() }
