//go:build !unix

package judge

import (
	"io/fs"
	"os"
	"runtime"
	"sync"
	"time"

	"go.uber.org/goleak"
)

// Where Unix sockets cannot carry descriptors (Windows) there is no judge:
// tools/cmd/grade refuses to grade, and go test runs the checks in one
// process. These are the judge's calls for that process, its own subject.

// Object is the other process's object behind a proxy.
type Object struct{}

// Call is never reached without a subject.
func (o *Object) Call(string, []any, ...any) error { return nil }

// Has is never reached without a subject.
func (o *Object) Has(string) bool { return false }

func IsJudge() bool                  { return false }
func IsSubject() bool                { return false }
func Remote[T any](course T) T       { return course }
func Serve(...any) int               { return 3 }
func Proxy[I any](func(*Object) I)   {}
func Sentinel(string, error)         {}
func Finish() string                 { return "" }
func Lost() bool                     { return false }
func Refused() string                { return "" }
func SameFile(a, b fs.FileInfo) bool { return os.SameFile(a, b) }
func LeakOptions() []goleak.Option   { return nil }
func Settle(time.Duration)           {}
func ExhaustFDs(int) (int, error)    { return 0, nil }
func ReleaseFDs()                    {}
func SubjectPID() int                { return os.Getpid() }

// The subject's services, in this process.

var snapshots struct {
	sync.Mutex
	next uint64
	opts map[uint64]goleak.Option
}

// Snapshot marks the goroutines running now, for Leaks.
func Snapshot() uint64 {
	snapshots.Lock()
	defer snapshots.Unlock()
	if snapshots.opts == nil {
		snapshots.opts = map[uint64]goleak.Option{}
	}
	snapshots.next++
	snapshots.opts[snapshots.next] = goleak.IgnoreCurrent()
	return snapshots.next
}

// Leaks is goleak's report of the goroutines started since snapshot id
// that are still running, or "".
func Leaks(id uint64) string {
	snapshots.Lock()
	opt, ok := snapshots.opts[id]
	snapshots.Unlock()
	var opts []goleak.Option
	if ok {
		opts = append(opts, opt)
	}
	if err := goleak.Find(opts...); err != nil {
		return withoutSuiteGoroutines(err.Error())
	}
	return ""
}

// Stacks is every goroutine's stack.
func Stacks() string {
	buf := make([]byte, 1<<20)
	for {
		if n := runtime.Stack(buf, true); n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// MemStats is runtime.ReadMemStats's.
func MemStats() (m runtime.MemStats) {
	runtime.ReadMemStats(&m)
	return m
}

// GC is runtime.GC.
func GC() { runtime.GC() }
