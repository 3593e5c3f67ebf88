package web

import (
	"sync"
)

// sffKey is the priority of a job under SFF: smaller is served first.
//
// A static file's key is its size. A CGI program's output size is unknown
// until it has run, so a CGI request is scheduled as cfg.CGISize (default 0:
// ahead of every file, in arrival order among themselves). A request that
// failed to read or resolve is answered with a short error page, so its key
// is 0 too.
//
// Pure SFF can starve a big file: while small requests keep arriving, it is
// never the smallest. With ageing (cfg.AgeRate > 0) a request is forgiven
// AgeRate bytes for every second it has waited. Since every waiting request
// ages at the same rate, "size − AgeRate × waited" orders requests exactly as
// "size + AgeRate × arrival time" does, which does not change while a request
// waits, so it can be the key of a heap.
func (s *Server) sffKey(j *job) int64 {
	// TODO(ex 6.6): 0 for a job with an error, s.cfg.CGISize for CGI, the
	// file's size otherwise; with s.cfg.AgeRate > 0, add
	// int64(AgeRate × seconds since s.start). Checked by TestEx6_6_SFF.
	return 0
}

// jobHeap is a min-heap of jobs by (key, seq): the smallest file first, and
// among equal sizes the one that came first. It implements heap.Interface;
// use it through heap.Push and heap.Pop only.
type jobHeap []*job

func (h jobHeap) Len() int { return len(h) }

func (h jobHeap) Less(i, j int) bool {
	// TODO(ex 6.6): by key, then by seq. Checked by TestEx6_6_SFF.
	return false
}

func (h jobHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }

func (h *jobHeap) Push(x any) {
	// TODO(ex 6.6): append x.(*job). Checked by TestEx6_6_SFF.
}

func (h *jobHeap) Pop() any {
	// TODO(ex 6.6): remove and return the last element (heap.Pop has moved the
	// smallest there); nil the slot so the job can be collected.
	// Checked by TestEx6_6_SFF.
	return nil
}

// sffQueue is the SFF buffer: a heap guarded by a mutex, with a condition
// variable that idle workers wait on. Its length is bounded by the master's
// slots, so push never waits.
type sffQueue struct {
	mu       sync.Mutex
	nonEmpty *sync.Cond // signalled on push; broadcast on close
	jobs     jobHeap
	closed   bool
}

// newSFFQueue returns an empty queue.
func newSFFQueue() (*sffQueue, error) {
	// TODO(ex 6.6): make the queue and its condition variable
	// (sync.NewCond(&q.mu)), and return it. Checked by TestEx6_6_SFF.
	return nil, notImplemented("6.6", "newSFFQueue")
}

// push adds j and wakes one waiting worker.
func (q *sffQueue) push(j *job) {
	// TODO(ex 6.6): under q.mu, heap.Push(&q.jobs, j) and Signal.
}

// pop waits for a job and removes the one with the smallest key; it reports
// false once the queue is closed.
func (q *sffQueue) pop() (*job, bool) {
	// TODO(ex 6.6): under q.mu, Wait while the heap is empty and the queue
	// open; report false if closed; else heap.Pop.
	return nil, false
}

// close wakes every waiting worker and returns the jobs still queued.
func (q *sffQueue) close() []*job {
	// TODO(ex 6.6): under q.mu, mark closed, Broadcast, and hand back (and
	// forget) the jobs left.
	return nil
}
