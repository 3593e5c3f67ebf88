package chatscaletest

import (
	"time"

	"serverlab/tests/testkit"
)

// A lock held across a NATS call shows only while that call blocks. A check
// that stalls the link at a moment of its own choosing may stall it while
// the server waits in some other call, or in none: then nothing blocks under
// the lock, and a server that holds it across its writes passes (wrong5's
// w08l did, at load 8–11). These helpers stall the link at the moment the
// write a check is about leaves the server, so the call is known to be
// hanging while the check times the server's other paths.

// stallOnWriteLocked stalls every link, and reports that the frame (a write
// of a session key, seen by hookClient under p.mu) is lost, if h asks for it;
// once.
func (p *ackDropper) stallOnWriteLocked(h *frameHook) bool {
	if !h.stallOnWrite {
		return false
	}
	h.stallOnWrite = false
	for _, c := range p.conns {
		p.stalled[c] = true
	}
	h.stalledAt <- time.Now()
	return true
}

// stallSessionWrite waits for the server behind proxy to write a session key
// (a refresh every SessionTTL/3), stalls the link as that write goes by and
// returns when: from then on the write hangs until cfg.RequestTimeout.
func stallSessionWrite(k *testkit.T, proxy *ackDropper, cfg Config) time.Time {
	k.Helper()
	h := &frameHook{stallOnWrite: true, stalledAt: make(chan time.Time, 1)}
	proxy.setHook(h)
	select {
	case at := <-h.stalledAt:
		return at
	case <-time.After(testkit.IOTimeout + 2*cfg.SessionTTL):
		k.Fatalf("the server wrote no session key within %v (the TTL is %v: a refresh every TTL/3, each writing the "+
			"key of every session on the server)", testkit.IOTimeout+2*cfg.SessionTTL, cfg.SessionTTL)
		return time.Time{}
	}
}
