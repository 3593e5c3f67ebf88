package jobserver

import (
	"errors"
	"sync"
)

// ErrQueueClosed is returned by Put on a closed queue.
var ErrQueueClosed = errors.New("queue closed")

// BoundedQueue is a first-in first-out queue of at most a fixed number of
// items, safe for many producers and many consumers. It is what gives the
// server back-pressure: when consumers fall behind, Put blocks the producer
// instead of letting the queue grow without bound.
//
// One mutex guards all the state; two condition variables, both on that
// mutex, let Put wait for room and Get wait for an item. Every change that can
// end a wait signals the matching condition.
type BoundedQueue[T any] struct {
	mu       sync.Mutex
	notEmpty sync.Cond // signalled when an item is added or the queue closes
	notFull  sync.Cond // signalled when an item is removed or the queue closes
	items    []T       // ring buffer; its length is the capacity
	head     int       // index of the oldest item
	n        int       // number of items
	closed   bool
}

// NewBoundedQueue returns an empty queue that holds up to capacity items (at
// least one).
func NewBoundedQueue[T any](capacity int) *BoundedQueue[T] {
	q := &BoundedQueue[T]{items: make([]T, max(capacity, 1))}
	q.notEmpty.L = &q.mu
	q.notFull.L = &q.mu
	return q
}

// Put adds item at the tail, waiting while the queue is full. It returns
// ErrQueueClosed, without adding the item, if the queue is closed before or
// while it waits.
func (q *BoundedQueue[T]) Put(item T) error {
	// TODO(ex 3.2): lock q.mu (defer the unlock); while the queue is full and
	// not closed, q.notFull.Wait() (a for loop, not an if: recheck after every
	// wake-up); if closed, return ErrQueueClosed; store item at
	// (q.head+q.n)%len(q.items), q.n++, and q.notEmpty.Signal().
	// Checked by TestEx3_2_BoundedQueue.
	return notImplemented("3.2", "BoundedQueue.Put")
}

// Get removes and returns the item at the head, waiting while the queue is
// empty. After Close it still returns the items left, in order; once none is
// left it returns ok == false.
func (q *BoundedQueue[T]) Get() (item T, ok bool) {
	// TODO(ex 3.2): lock; while empty and not closed, q.notEmpty.Wait(); if
	// still empty (closed and drained) return false; take q.items[q.head]
	// (zero the slot), advance q.head, q.n--, and q.notFull.Signal().
	// Checked by TestEx3_2_BoundedQueue.
	return item, false
}

// Close closes the queue and wakes every waiting Put and Get: the Puts fail,
// the Gets drain what is left. Closing twice is harmless.
func (q *BoundedQueue[T]) Close() {
	// TODO(ex 3.2): lock; set q.closed; Broadcast on both conditions, so
	// that every waiting Put and Get wakes up. Checked by
	// TestEx3_2_BoundedQueue.
}

// Len returns the number of items in the queue.
func (q *BoundedQueue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n
}
