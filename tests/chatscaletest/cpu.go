package chatscaletest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"serverlab/tests/testkit"
)

// demand is the processor time the server's process wanted over a window:
// the time its threads ran plus the time they waited, runnable, for a
// processor. A goroutine that spins wants the whole window whatever the
// machine's load (what it does not get, it waits for); an idle server
// wants next to nothing. ok is false where /proc has no schedstat.
func demand() (time.Duration, bool) {
	tasks, err := filepath.Glob(testkit.ServerProc() + "/task/*/schedstat")
	if err != nil || len(tasks) == 0 {
		return 0, false
	}
	var total time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // a thread that ended
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			continue
		}
		ran, _ := strconv.ParseInt(f[0], 10, 64)
		waited, _ := strconv.ParseInt(f[1], 10, 64)
		total += time.Duration(ran + waited)
	}
	return total, true
}

// spinShare is the share of one processor over a window above which a
// server is taken to spin: an idle one, woken by its timers and NATS's
// reconnect attempts, stays far below it.
const spinShare = 0.5

// checkNoSpin fails if the server's process wanted more than spinShare of a
// processor between from (a demand() reading) and now, a window of wall
// time took.
func checkNoSpin(k *testkit.T, from time.Duration, took time.Duration, what string) {
	k.Helper()
	now, ok := demand()
	if !ok || took <= 0 {
		return
	}
	// On a busy machine every wake-up of an idle server waits in the run
	// queue too, so the bound grows with the load as every wait of the
	// suite does (testkit.TimeScale): a correct server wanted 156% of a
	// processor at load 16, and a spinning one wants a whole processor per
	// spinning thread even on a quiet machine, where the bound is 50%.
	limit := spinShare * testkit.TimeScale
	if share := float64(now-from) / float64(took); share > limit {
		k.Fatalf("%s: the server's process wanted %.0f%% of a processor over %v (ran or waited to run: %v); want under %.0f%%: "+
			"a loop that retries without a pause (a publish, a consumer, a reconnect) spins while NATS is away",
			what, 100*share, took.Round(time.Millisecond), (now - from).Round(time.Millisecond), 100*limit)
	}
}
