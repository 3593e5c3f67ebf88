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

	readers        int  // readers holding the lock, plus readers admitted and not yet running
	writing        bool // a writer holds the lock
	writersWaiting int
	readersWaiting int
	phase          uint64 // incremented each time a writer admits the waiting readers

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
	l.mu.Lock()
	defer l.mu.Unlock()
	l.init()
	if !l.writing && l.writersWaiting == 0 {
		l.readers++
		return
	}
	// Wait for the next writer's Unlock: it counts us in l.readers and moves
	// to the next phase. Comparing phases (not re-checking l.writing) is what
	// lets all of us in even if another writer is already waiting.
	l.readersWaiting++
	l.waiting(false)
	for phase := l.phase; l.phase == phase; {
		l.readOK.Wait()
	}
}

// RUnlock undoes one RLock. The last reader out wakes a waiting writer.
func (l *RWLock) RUnlock() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.readers--
	if l.readers < 0 {
		panic("stock: RUnlock of an RWLock not locked for reading")
	}
	if l.readers == 0 && l.writersWaiting > 0 {
		l.writeOK.Signal()
	}
}

// Lock locks l for writing. It waits until no reader and no writer holds it.
func (l *RWLock) Lock() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.init()
	if l.writing || l.readers > 0 {
		l.writersWaiting++
		l.waiting(true)
		for l.writing || l.readers > 0 {
			l.writeOK.Wait()
		}
		l.writersWaiting--
	}
	l.writing = true
}

// Unlock undoes Lock. Readers that waited are admitted all together, ahead of
// any waiting writer; with no reader waiting, one writer is woken.
func (l *RWLock) Unlock() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.writing {
		panic("stock: Unlock of an RWLock not locked for writing")
	}
	l.writing = false
	if l.readersWaiting > 0 {
		l.readers += l.readersWaiting
		l.readersWaiting = 0
		l.phase++
		l.readOK.Broadcast()
		return
	}
	l.writeOK.Signal()
}
