package testkit

import (
	"fmt"
	"strings"
	"testing"
)

// A leak of one goroutine per connection is hundreds of goroutines: the
// report shows the course's own first, without the runtime's frames, and
// counts the rest.
func TestBoundedStacksCourseFirst(t *testing.T) {
	var dump strings.Builder
	for i := range 300 {
		fmt.Fprintf(&dump, "goroutine %d [IO wait]:\ninternal/poll.runtime_pollWait(0x1)\n\t/go/src/runtime/netpoll.go:351 +0x85\n"+
			"net.(*conn).Read(0xc0)\n\t/go/src/net/net.go:194 +0x45\n\n", i+1)
	}
	dump.WriteString("goroutine 999 [chan receive]:\nruntime.gopark(0x1)\n\t/go/src/runtime/proc.go:435 +0xce\n" +
		"serverlab/chapters/02.(*Server).writer(0xc0)\n\t/work/chapters/02/server.go:88 +0x1\n" +
		"created by serverlab/chapters/02.(*Server).serve in goroutine 7\n\t/work/chapters/02/server.go:60 +0x2\n")
	got := boundedStacks(dump.String())
	lines := strings.Split(got, "\n")
	if !strings.HasPrefix(lines[0], "goroutine 999") || !strings.Contains(lines[1], "(*Server).writer") {
		t.Errorf("the course's goroutine must come first, without runtime frames:\n%s", got)
	}
	if strings.Contains(got, "runtime.gopark") || strings.Contains(got, "runtime_pollWait") {
		t.Errorf("runtime frames must be cut:\n%s", got)
	}
	if len(lines) > 40 || !strings.Contains(got, "295 more goroutines") {
		t.Errorf("want at most 40 lines ending with a count of the rest, got %d:\n%s", len(lines), got)
	}
}

func TestBoundedStacksGoleak(t *testing.T) {
	report := "found unexpected goroutines:\n[Goroutine 7 in state chan receive, with serverlab/solutions/02.(*Server).broadcast on top of the stack:\n" +
		"serverlab/solutions/02.(*Server).broadcast(0xc000)\n\t/work/solutions/02/server.go:10 +0x1\n" +
		"created by serverlab/solutions/02.(*Server).Serve in goroutine 6\n\t/work/solutions/02/server.go:5 +0x1\n]"
	got := boundedStacks(report)
	want := "Goroutine 7 in state chan receive, with serverlab/solutions/02.(*Server).broadcast on top of the stack:\n" +
		"    serverlab/solutions/02.(*Server).broadcast(0xc000)\n        /work/solutions/02/server.go:10\n" +
		"    created by serverlab/solutions/02.(*Server).Serve in goroutine 6\n        /work/solutions/02/server.go:5"
	if got != want {
		t.Errorf("boundedStacks =\n%s\nwant\n%s", got, want)
	}
}

// A leak whose goroutines include Close is a Close still waiting: the cause
// is what it waits for, not a Close that does not wait.
func TestLeakCauseWhenCloseWaits(t *testing.T) {
	if got := leakCause("  serverlab/solutions/02.(*Server).Close"); !strings.Contains(got, "WaitGroup Add without its Done") {
		t.Errorf("leakCause with only Close leaked = %q", got)
	}
	if got := leakCause("  serverlab/solutions/02.(*Server).Close\n  serverlab/solutions/02.(*Server).writer"); !strings.Contains(got, "Close itself is still running") {
		t.Errorf("leakCause with Close leaked = %q", got)
	}
	if got := leakCause("  serverlab/solutions/02.(*Server).broadcast"); !strings.Contains(got, "Close must stop every goroutine") {
		t.Errorf("leakCause without Close = %q", got)
	}
}

// A Close that waits for a writer that never ends (a reference never
// released) names the writer, not Close, as what to fix.
func TestStillRunningNamesTheGoroutineCloseWaitsFor(t *testing.T) {
	dump := "goroutine 7 [sync.WaitGroup.Wait]:\nsync.runtime_SemacquireWaitGroup(0x1)\n\t/go/src/runtime/sema.go:110 +0x1\n" +
		"serverlab/chapters/03.(*Server).Close(0xc0)\n\t/work/chapters/03/server.go:120 +0x2\n\n" +
		"goroutine 9 [chan receive]:\nserverlab/chapters/03.(*clientConn).writer(0xc0)\n\t/work/chapters/03/conn.go:88 +0x3\n" +
		"created by serverlab/chapters/03.(*Server).serve in goroutine 8\n\t/work/chapters/03/server.go:60 +0x4\n\n" +
		"goroutine 10 [IO wait]:\nnet.(*conn).Read(0xc0)\n\t/go/src/net/net.go:194 +0x45\n"
	got := stillRunningIn(dump)
	for _, want := range []string{
		"Close is waiting:\n  serverlab/chapters/03.(*Server).Close (chapters/03/server.go:120) [sync.WaitGroup.Wait]",
		"  serverlab/chapters/03.(*clientConn).writer (chapters/03/conn.go:88) [chan receive]",
		"a reference to a connection never released",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("stillRunning lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "net.(*conn).Read") {
		t.Errorf("goroutines outside the course's code are not the student's to fix:\n%s", got)
	}
	if stillRunningIn("goroutine 10 [IO wait]:\nnet.(*conn).Read(0xc0)\n\t/go/src/net/net.go:194 +0x45\n") != "" {
		t.Errorf("no course goroutine: want \"\" (the old wording)")
	}
}

// A Close waiting on a WaitGroup while nothing of the server runs is a Done
// never called.
func TestStillRunningCountNeverReleased(t *testing.T) {
	dump := "goroutine 7 [sync.WaitGroup.Wait]:\nsync.runtime_SemacquireWaitGroup(0x1)\n\t/go/src/runtime/sema.go:110 +0x1\n" +
		"serverlab/solutions/02.(*Server).Close(0xc0)\n\t/work/solutions/02/server.go:275 +0x2\n"
	if got := stillRunningIn(dump); !strings.Contains(got, "a WaitGroup Add without its Done") {
		t.Errorf("stillRunning = %q, want it to name a Done never called", got)
	}
}
