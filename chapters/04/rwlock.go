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

	// TODO(ex 4.3): the state mu guards. You will need at least: how many
	// readers hold the lock, whether a writer holds it, how many writers and
	// how many readers wait, and something that tells a waiting reader "a
	// writer has let you in" (a counter of writer phases works).

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
	// TODO(ex 4.3): with mu held: if no writer holds or waits, count yourself
	// as a reader and return. Otherwise count yourself as a waiting reader,
	// call l.waiting(false), and readOK.Wait() until a writer's Unlock has let
	// the waiting readers in (it counts them as readers for you).
	// Checked by TestEx4_3_RWLock.
}

// RUnlock undoes one RLock. The last reader out wakes a waiting writer.
func (l *RWLock) RUnlock() {
	// TODO(ex 4.3): with mu held: one reader fewer; if that was the last and
	// a writer waits, writeOK.Signal(). Checked by TestEx4_3_RWLock.
}

// Lock locks l for writing. It waits until no reader and no writer holds it.
func (l *RWLock) Lock() {
	// TODO(ex 4.3): with mu held: if a writer or any reader holds the lock,
	// count yourself as a waiting writer, call l.waiting(true), and
	// writeOK.Wait() in a loop until neither does; then take the lock.
	// Checked by TestEx4_3_RWLock.
}

// Unlock undoes Lock. Readers that waited are admitted all together, ahead of
// any waiting writer; with no reader waiting, one writer is woken.
func (l *RWLock) Unlock() {
	// TODO(ex 4.3): with mu held: release the lock. If readers wait, count
	// them all as readers, move to the next phase and readOK.Broadcast();
	// otherwise writeOK.Signal(). Checked by TestEx4_3_RWLock.
}
