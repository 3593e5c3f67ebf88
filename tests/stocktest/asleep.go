package stocktest

import (
	"runtime"
	"serverlab/tests/testkit"
	"strings"
	"time"
)

// blockedStates are the states runtime.Stack shows for a goroutine that is
// parked: it uses no CPU until something wakes it.
var blockedStates = []string{
	"sync.Cond.Wait", "sync.Mutex.Lock", "sync.RWMutex.Lock", "sync.RWMutex.RLock", "semacquire",
	"chan receive", "chan send", "select",
}

// actorStates returns the state of every goroutine running an actor of the
// lock harness, as runtime.Stack prints it ("chan receive", "runnable", …).
func actorStates() []string {
	var states []string
	for _, g := range testkit.Goroutines() {
		if strings.Contains(g.Stack, "(*lockHarness).start.func") {
			states = append(states, g.State)
		}
	}
	return states
}

func parked(state string) bool {
	for _, s := range blockedStates {
		if strings.HasPrefix(state, s) {
			return true
		}
	}
	return false
}

// checkAsleep: every actor, holding the lock or waiting for it, is parked.
// A goroutine that waits by spinning (a loop re-checking the state, with or
// without runtime.Gosched or time.Sleep) is never parked. One that has just
// called onWait needs a moment to reach Cond.Wait, so the check looks again
// until everyone is parked or a second has passed.
func (h *lockHarness) checkAsleep(state string) {
	h.k.Helper()
	deadline := time.Now().Add(time.Second)
	for {
		states := actorStates()
		var awake []string
		for _, s := range states {
			if !parked(s) {
				awake = append(awake, s)
			}
		}
		if len(awake) == 0 {
			return
		}
		if time.Now().After(deadline) {
			h.k.Fatalf("while %s, %d of the %d goroutines using the lock were not asleep for a second (states: "+
				"%s): a goroutine that waits for the lock must sleep in Cond.Wait, not spin re-checking it",
				state, len(awake), len(states), strings.Join(awake, ", "))
		}
		runtime.Gosched()
	}
}
