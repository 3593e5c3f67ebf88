package web

import (
	"container/heap"
	"sync"
	"time"
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
	var size int64
	switch {
	case j.err != nil:
		size = 0
	case j.target.CGI:
		size = s.cfg.CGISize
	default:
		size = j.target.Info.Size()
	}
	if s.cfg.AgeRate <= 0 {
		return size
	}
	arrived := time.Since(s.start).Seconds()
	return size + int64(s.cfg.AgeRate*arrived)
}

// jobHeap is a min-heap of jobs by (key, seq): the smallest file first, and
// among equal sizes the one that came first. It implements heap.Interface;
// use it through heap.Push and heap.Pop only.
type jobHeap []*job

func (h jobHeap) Len() int { return len(h) }

func (h jobHeap) Less(i, j int) bool {
	if h[i].key != h[j].key {
		return h[i].key < h[j].key
	}
	return h[i].seq < h[j].seq
}

func (h jobHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }

func (h *jobHeap) Push(x any) { *h = append(*h, x.(*job)) }

func (h *jobHeap) Pop() any {
	old := *h
	n := len(old)
	j := old[n-1]
	old[n-1] = nil // let the job be collected once served
	*h = old[:n-1]
	return j
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
	q := &sffQueue{}
	q.nonEmpty = sync.NewCond(&q.mu)
	return q, nil
}

// push adds j and wakes one waiting worker.
func (q *sffQueue) push(j *job) {
	q.mu.Lock()
	defer q.mu.Unlock()
	heap.Push(&q.jobs, j)
	q.nonEmpty.Signal()
}

// pop waits for a job and removes the one with the smallest key; it reports
// false once the queue is closed.
func (q *sffQueue) pop() (*job, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.jobs) == 0 && !q.closed {
		q.nonEmpty.Wait()
	}
	if q.closed {
		return nil, false
	}
	return heap.Pop(&q.jobs).(*job), true
}

// close wakes every waiting worker and returns the jobs still queued.
func (q *sffQueue) close() []*job {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.nonEmpty.Broadcast()
	left := q.jobs
	q.jobs = nil
	return left
}
