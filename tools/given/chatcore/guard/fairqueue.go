package guard

import (
	"sync"
	"time"
)

// FairQueue runs password hashes: at most slots at once (each takes a core
// and its memory), and when every slot is taken the waiting hashes get them
// round-robin by client address — one line, first in first out, per
// address, and the addresses served in turn. So an honest login from one
// address waits about (addresses waiting × one hash ÷ slots), however many
// hashes an abuser's address has queued: its queue delays only itself.
//
// Issue 35 sized the queue by time instead: a hash that could not expect
// to start within 8 s (the original load tester gives a request 10 s) was
// refused Server busy., and registrations could hold three quarters of it,
// so that a flood of registrations left room for logins (attacker5's F9).
// The share refused part of an honest burst that fit the cores (the
// tester's 451 registrations from 127.0.0.1, which it then takes for
// "user exists", and quits at the login), and a first-come queue still let
// one address's flood push every other address's hash to the back. Turns
// by address do neither: a flood delays its own address only.
//
// The queue is bounded in count: each connection has at most one hash
// waiting or running (the chatcore protocol is request/answer, and a
// server reads a connection's next request only once it has answered the
// last), so the lines hold at most as many hashes as the connection caps
// let in; perAddr caps one address's line (a server passes its connections
// per address), limit all of them. A hash past a cap is refused at once.
//
// wait bounds the one time that fairness does not: how long the first hash
// of an address's line waits for its turn. When the server cannot give one
// hash to each waiting address within wait, it is truly over its bound,
// and the whole line is refused (its later hashes would wait as long).
// Once done is closed (the server is closing) no hash waits: Close waits
// for the readers, and a reader must not wait out a queue.
type FairQueue struct {
	slots, perAddr, limit int
	wait                  time.Duration
	done                  <-chan struct{}

	mu      sync.Mutex
	running int              // hashes in a slot
	waiting int              // hashes in the lines
	lines   map[string]*line // by address; only lines with a waiter
	ring    []*line          // the lines, in turn
	next    int              // index in ring of the line served next
}

// line is one address's waiting hashes, oldest first.
type line struct {
	addr    string
	waiters []*waiter
}

// waiter is one hash waiting for a slot. decided is closed once it has one
// (granted) or is refused; timer refuses its line if it waits too long at
// the head of it.
type waiter struct {
	line    *line
	decided chan struct{}
	granted bool
	timer   *time.Timer
}

// NewFairQueue returns a queue that runs slots hashes at once, lets at
// most perAddr wait from one address and limit in all, and refuses an
// address's line when its first hash waited wait for a slot, or once done
// is closed.
func NewFairQueue(slots, perAddr, limit int, wait time.Duration, done <-chan struct{}) *FairQueue {
	return &FairQueue{slots: max(slots, 1), perAddr: max(perAddr, 1), limit: max(limit, 1), wait: wait, done: done,
		lines: make(map[string]*line)}
}

// Run runs f in a slot, on the caller's goroutine, once it is addr's turn,
// and reports true; or reports false, without running f, if a cap refused
// it, its line waited too long, or done was closed.
func (q *FairQueue) Run(addr string, f func()) bool {
	if !q.enter(addr) {
		return false
	}
	defer q.release()
	f()
	return true
}

// enter takes a slot for a hash from addr, waiting for its turn.
func (q *FairQueue) enter(addr string) bool {
	select {
	case <-q.done:
		return false
	default:
	}
	q.mu.Lock()
	if q.running < q.slots && q.waiting == 0 {
		q.running++
		q.mu.Unlock()
		return true
	}
	l := q.lines[addr]
	if q.waiting >= q.limit || (l != nil && len(l.waiters) >= q.perAddr) {
		q.mu.Unlock()
		return false
	}
	if l == nil {
		l = &line{addr: addr}
		q.lines[addr] = l
		q.ring = append(q.ring, l)
	}
	w := &waiter{line: l, decided: make(chan struct{})}
	l.waiters = append(l.waiters, w)
	q.waiting++
	if len(l.waiters) == 1 {
		q.arm(w)
	}
	q.mu.Unlock()

	select {
	case <-w.decided:
		return w.granted
	case <-q.done:
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if w.granted { // the slot came as the server closed: give it on
		q.releaseLocked()
		return false
	}
	if !q.isDecided(w) {
		q.remove(w)
	}
	return false
}

// arm starts the timer of w, the new head of its line.
func (q *FairQueue) arm(w *waiter) {
	w.timer = time.AfterFunc(q.wait, func() { q.expire(w) })
}

// expire refuses w's line if w is still waiting at its head: the server
// did not give its address a turn within wait.
func (q *FairQueue) expire(w *waiter) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.isDecided(w) {
		return
	}
	l := w.line
	for _, o := range l.waiters {
		close(o.decided)
	}
	q.waiting -= len(l.waiters)
	l.waiters = nil
	q.drop(l)
}

func (q *FairQueue) isDecided(w *waiter) bool {
	select {
	case <-w.decided:
		return true
	default:
		return false
	}
}

// remove takes w, undecided, out of its line (the server is closing).
func (q *FairQueue) remove(w *waiter) {
	l := w.line
	for i, o := range l.waiters {
		if o == w {
			l.waiters = append(l.waiters[:i], l.waiters[i+1:]...)
			break
		}
	}
	if w.timer != nil { // only a head has a timer
		w.timer.Stop()
	}
	close(w.decided)
	q.waiting--
	if len(l.waiters) == 0 {
		q.drop(l)
	} else if l.waiters[0].timer == nil {
		q.arm(l.waiters[0])
	}
}

// drop takes the empty line l out of the turn.
func (q *FairQueue) drop(l *line) {
	delete(q.lines, l.addr)
	for i, o := range q.ring {
		if o == l {
			q.ring = append(q.ring[:i], q.ring[i+1:]...)
			if i < q.next {
				q.next--
			}
			break
		}
	}
	if q.next >= len(q.ring) {
		q.next = 0
	}
}

// release gives a finished hash's slot to the head of the next line in
// turn, or frees it.
func (q *FairQueue) release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.releaseLocked()
}

func (q *FairQueue) releaseLocked() {
	if len(q.ring) == 0 {
		q.running--
		return
	}
	l := q.ring[q.next]
	w := l.waiters[0]
	l.waiters = l.waiters[1:]
	q.waiting--
	if w.timer != nil {
		w.timer.Stop()
	}
	w.granted = true
	close(w.decided)
	if len(l.waiters) == 0 {
		q.drop(l) // next now points at the line after l
		return
	}
	q.arm(l.waiters[0])
	q.next = (q.next + 1) % len(q.ring)
}
