//go:build unix

package judge

import (
	"reflect"
	"runtime"
	"strings"
	"time"
)

// Settle is synctest.Wait across processes: it returns once every goroutine
// of the judge and of the subject is blocked (on a lock, a condition, a
// channel, a socket) and has stayed so for a few looks in a row, or after
// limit. A check uses it where, in one process, it would wait in a synctest
// bubble for "blocked" to be told from "not run yet"; a bubble cannot hold
// two processes.
func Settle(limit time.Duration) {
	deadline := time.Now().Add(limit)
	calm := 0
	for calm < 3 && time.Now().Before(deadline) {
		if idle(stacksHere()) && remoteIdle() {
			calm++
		} else {
			calm = 0
		}
		time.Sleep(2 * time.Millisecond) // between looks, not synchronisation: a look is the wait
	}
}

func remoteIdle() bool {
	var ok bool
	if err := callService("idle", reflect.TypeFor[func() bool](), nil, &ok); err != nil {
		return true // a subject that has gone is as settled as it will be
	}
	return ok
}

// idle reports whether every goroutine in dump but the first (the caller)
// is blocked.
func idle(dump string) bool {
	blocks := strings.Split(dump, "\n\n")
	for _, b := range blocks[min(1, len(blocks)):] {
		head, _, _ := strings.Cut(b, "\n")
		_, state, _ := strings.Cut(head, "[")
		state, _, _ = strings.Cut(state, "]")
		state, _, _ = strings.Cut(state, ",")
		switch state {
		case "running", "runnable", "syscall", "sleep", "preempted", "":
			return false
		}
	}
	return true
}

func stacksHere() string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}
