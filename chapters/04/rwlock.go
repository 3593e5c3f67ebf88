package stock

import "sync"

// RWLock is a writer-preferring reader-writer lock built on a mutex and two
// condition variables. Waiting goroutines sleep in Cond.Wait; nothing spins.
// The zero value is an unlocked lock.
//
// Its guarantees:
//
//   - readers share: with no writer holding or waiting, RLock never blocks;
//   - writers exclude: a writer holds the lock alone;
//   - writers first: once a writer waits, new readers wait behind it, so a
//     steady stream of overlapping readers cannot starve a writer;
//   - readers are not starved either: when a writer unlocks, every reader that
//     was waiting at that moment gets in before any other writer.
//
// The original's lock busy-waited on plain ints: a waiting thread burned a
// core re-reading counters another core was writing, and the reads were data
// races. Here a waiter costs nothing until it is woken.
type RWLock struct {
	mu      sync.Mutex
	readOK  sync.Cond // signalled when a writer admits the waiting readers
	writeOK sync.Cond // signalled when the lock may be free for a writer

	// TODO(ex 4.3): Done when: the fields here are the state mu guards, enough
	// to answer: how many readers hold the lock, whether a writer holds it, how
	// many writers and how many readers wait, and whether a waiting reader has
	// been let in by a writer (a counter of writer phases says so even after
	// the next writer arrives).

	onWait func(writer bool) // test hook, see NewRWLock
}

// NewRWLock returns an unlocked lock. onWait, if not nil, is called each time
// a goroutine is about to block (writer tells which side): tests use it to
// know, without timing, that a goroutine is waiting. It runs with the lock's
// internal mutex held and must not block or call the lock.
func NewRWLock(onWait func(writer bool)) *RWLock {
	return &RWLock{onWait: onWait}
}

// init points the condition variables at mu; call it with mu held at the
// start of RLock and Lock, so that the zero value works.
func (l *RWLock) init() {
	if l.readOK.L == nil {
		l.readOK.L = &l.mu
		l.writeOK.L = &l.mu
	}
}

// waiting calls the test hook; call it once, with mu held, just before a
// goroutine first waits.
func (l *RWLock) waiting(writer bool) {
	if l.onWait != nil {
		l.onWait(writer)
	}
}

// RLock locks l for reading. It waits while a writer holds the lock or waits
// for it.
func (l *RWLock) RLock() {
	// TODO(ex 4.3): Done when: a reader gets the lock at once only while no
	// writer holds it or waits for it (writers are not starved); otherwise it
	// waits, reporting it through l.waiting, until a writer's Unlock has let
	// the waiting readers in, which counts it as a reader for it. Checked by
	// TestEx4_3_RWLock.
}

// RUnlock undoes one RLock. The last reader out wakes a waiting writer.
func (l *RWLock) RUnlock() {
	// TODO(ex 4.3): Done when: the reader is gone, and the last reader out
	// wakes one waiting writer. Checked by TestEx4_3_RWLock.
}

// Lock locks l for writing. It waits until no reader and no writer holds it.
func (l *RWLock) Lock() {
	// TODO(ex 4.3): Done when: a writer holds the lock alone, after waiting
	// (reported through l.waiting, and rechecked after every wake-up) while a
	// writer or any reader held it. Checked by TestEx4_3_RWLock.
}

// Unlock undoes Lock. Readers that waited are admitted all together, ahead of
// any waiting writer; with no reader waiting, one writer is woken.
func (l *RWLock) Unlock() {
	// TODO(ex 4.3): Done when: the writer has released the lock and hands it on
	// fairly: every reader waiting now is let in, counted as a reader, in one
	// new phase (readers are not starved), or, with no reader waiting, one
	// waiting writer is woken. Checked by TestEx4_3_RWLock.
}
