package load

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// progress prints one line per second while a run lasts, so that a long run
// visibly moves and a stalled server visibly stalls.
type progress struct {
	stop chan struct{}
	wg   sync.WaitGroup
}

// startProgress starts printing to w (nothing if w is nil). total is the
// number of requests the run will issue, or 0 when only duration bounds it;
// counts reports successes and failures so far.
func startProgress(w io.Writer, total int64, duration time.Duration, counts func() (int64, int64)) *progress {
	p := &progress{stop: make(chan struct{})}
	if w == nil {
		return p
	}
	p.wg.Go(func() {
		start := time.Now()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		var last int64
		for {
			select {
			case <-p.stop:
				return
			case now := <-tick.C:
				ok, failed := counts()
				done := ok + failed
				fmt.Fprintln(w, progressLine(now.Sub(start), done, total, duration, done-last, failed))
				last = done
			}
		}
	})
	return p
}

// progressLine formats e.g. "   3s  3012/10000  1004 req/s  2 errors". perSec
// is the number completed in the last second.
func progressLine(elapsed time.Duration, done, total int64, duration time.Duration, perSec, failed int64) string {
	of := ""
	switch {
	case total > 0:
		of = fmt.Sprintf("/%d", total)
	case duration > 0:
		of = fmt.Sprintf(" in %v/%v", elapsed.Round(time.Second), duration)
	}
	return fmt.Sprintf("%4.0fs  %d%s  %d req/s  %d errors", elapsed.Seconds(), done, of, perSec, failed)
}

// end stops the printing and waits for it, so nothing is printed after Run
// returns.
func (p *progress) end() {
	close(p.stop)
	p.wg.Wait()
}
