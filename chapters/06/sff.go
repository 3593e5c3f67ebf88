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
	// TODO(ex 6.6): Done when: the key ranks jobs shortest first: an error
	// response first (0), a CGI request as CGISize, a file by its size; with
	// AgeRate set, every job's key (an error's and a CGI request's too) adds
	// AgeRate bytes per second from the server's start to the job's arrival,
	// so that a large file is not starved by a stream of small ones. Checked by
	// TestEx6_6_SFF.
	return 0
}

// jobHeap is a min-heap of jobs by (key, seq): the smallest file first, and
// among equal sizes the one that came first. It implements heap.Interface;
// use it through heap.Push and heap.Pop only.
type jobHeap []*job

func (h jobHeap) Len() int { return len(h) }

func (h jobHeap) Less(i, j int) bool {
	// TODO(ex 6.6): Done when: the smaller key comes first, and equal keys keep
	// their arrival order. Checked by TestEx6_6_SFF.
	return false
}

func (h jobHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }

func (h *jobHeap) Push(x any) {
	// TODO(ex 6.6): Done when: the job is the heap slice's last element
	// (container/heap then restores the order). Checked by TestEx6_6_SFF.
}

func (h *jobHeap) Pop() any {
	// TODO(ex 6.6): Done when: the last element (where container/heap has moved
	// the smallest) is removed and returned, and its slot no longer refers to
	// the job. Checked by TestEx6_6_SFF.
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
	// TODO(ex 6.6): Done when: the queue is empty, open, and its condition
	// variable uses q.mu. Checked by TestEx6_6_SFF.
	return nil, notImplemented("6.6", "newSFFQueue")
}

// push adds j and wakes one waiting worker.
func (q *sffQueue) push(j *job) {
	// TODO(ex 6.6): Done when: the job is in the heap, under q.mu, and one
	// waiting pop is woken.
}

// pop waits for a job and removes the one with the smallest key; it reports
// false once the queue is closed.
func (q *sffQueue) pop() (*job, bool) {
	// TODO(ex 6.6): Done when: it returns the job with the smallest key,
	// waiting under q.mu while the queue is empty and open (rechecking after
	// every wake-up), and reports false once it is closed.
	return nil, false
}

// close wakes every waiting worker and returns the jobs still queued.
func (q *sffQueue) close() []*job {
	// TODO(ex 6.6): Done when: the queue is closed under q.mu, every waiting
	// pop woken, and the jobs left handed back and forgotten.
	return nil
}
