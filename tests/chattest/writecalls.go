package chattest

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/wire"
)

// checkOneWritePerBatch: exercise 2.2's writer "writes each batch take gives
// with one system call for all its frames". The judge cannot see a Write
// call, but Linux counts the write system calls of the server's process
// (/proc/PID/io, syscw: write and writev alike, one each). slow (small socket
// buffers) reads nothing while sender broadcasts a frame of 64 KiB, which
// fills slow's buffers and holds his writer, then 200 small frames, which
// queue behind it; watcher reads all of them and a last frame tells that
// every push is done. Then the count starts, slow reads everything, and the
// count stops: the solution's writev makes a handful of calls (the rest of
// the big frame, then the batch, each in a few pieces while slow's buffers
// drain), a writer that writes frame by frame at least one per frame.
//
// Chapter 02 only (impl.GoroutinePerClient): the writer is that design's.
func checkOneWritePerBatch(k *testkit.T, impl Impl) {
	k.Helper()
	if !impl.GoroutinePerClient {
		return
	}
	if _, err := writeCalls(); err != nil {
		k.Logf("not counting the writer's system calls: %v", err)
		return
	}
	const small = 200
	e := startOn(k, impl, Config{MaxPending: 1 << 20, StallTimeout: time.Hour}, k.ListenSmall(), "sender", "slow", "watcher")
	slow := e.loginSmall("slow")
	watcher := e.loginAs("watcher")
	sender := e.loginAs("sender")
	frames := numbered("sender", 1, wire.MaxPayload)
	for i := range small {
		frames = append(frames, broadcastFrame("sender", everyone, fmt.Appendf(nil, "small %d", i)))
	}
	frames = append(frames, broadcastFrame("sender", everyone, []byte("last")))
	done := make(fanIn, 1)
	sendAll(sender, "sender", frames, done)
	for i, want := range frames {
		expect(k, watcher, "watcher", want, fmt.Sprintf("sender broadcast a frame of 64 KiB and %d small ones; "+
			"frame %d", small+1, i+1))
	}
	done.wait(k, 1, "sender's broadcasts")
	before, _ := writeCalls()
	slow.SetReadDeadline(time.Now().Add(testkit.IOTimeout))
	for i, want := range frames {
		got, err := wire.ReadFrame(slow)
		if err != nil || testkit.FrameDiff(want, got) != "" {
			k.Fatalf("slow read nothing while sender broadcast a frame of 64 KiB and %d small ones, then read: "+
				"frame %d of %d\n  want: %v\n   got: %v (%s)", small+1, i+1, len(frames), brief(want), brief(got),
				testkit.Describe(err))
		}
		slow.SetReadDeadline(time.Now().Add(testkit.IOTimeout))
	}
	after, _ := writeCalls()
	if calls := after - before; calls >= small/2 {
		k.Fatalf("sent: a frame of 64 KiB and %d small ones broadcast to slow, who read them only once all were "+
			"queued (the small ones one batch for his writer)\nexpected: a few write system calls for them (one "+
			"writev per batch, in pieces while his buffers drain)\n     got: %d write calls by the server's process "+
			"while he read\nLikely cause: the writer writes each frame with a Write of its own; write the batch "+
			"with one call: net.Buffers(batch).WriteTo(conn) (writev)", small, calls)
	}
	k.Logf("slow read a frame of 64 KiB and %d small ones queued behind it: %d write calls", small+1, after-before)
}

// writeCalls is the number of write system calls the server's process has
// made so far (syscw).
func writeCalls() (int64, error) {
	b, err := os.ReadFile(testkit.ServerProc() + "/io")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "syscw: "); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, errors.New("/proc/PID/io has no syscw")
}
