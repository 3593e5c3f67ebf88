package stocktest

import (
	"sync"
	"sync/atomic"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/stockfile"
)

// pauseLock is a stock's lock that can stop the next goroutine to unlock it
// right after its Unlock, so that the suite can run another trade in the gap.
// A trade that checks "enough left?", unlocks, and locks again to update is
// caught in that gap every time, not once in a million runs.
type pauseLock struct {
	mu     sync.Mutex
	armed  atomic.Bool
	paused chan struct{}
	resume chan struct{}
}

func newPauseLock() *pauseLock {
	return &pauseLock{paused: make(chan struct{}, 1), resume: make(chan struct{})}
}

func (l *pauseLock) Lock() { l.mu.Lock() }

func (l *pauseLock) Unlock() {
	l.mu.Unlock()
	if l.armed.CompareAndSwap(true, false) {
		l.paused <- struct{}{}
		<-l.resume
	}
}

// checkAtomicTrades: goroutine A trades and is stopped right after it first
// unlocks the stock; B trades meanwhile; then A goes on. With the check and
// the update in one critical section, A has finished its trade when it
// unlocks, and B sees the result.
func checkAtomicTrades(k *testkit.T, impl Impl) {
	k.Helper()
	var lock *pauseLock
	tree := impl.NewTree(func() sync.Locker {
		lock = newPauseLock()
		return lock
	})
	const id = 7
	if err := tree.Insert(stockfile.Stock{ID: id, Count: 1, Price: 70}); err != nil {
		treeErr(k, "Insert", err)
		k.Fatalf("Insert: %v", err)
	}
	if lock == nil {
		k.Fatalf("NewTree(newLock): Insert did not call newLock to make the stock's lock")
	}

	errA, errB := interleave(k, lock, "Buy(7, 1)", func() error { return tree.Buy(id, 1) },
		func() error { return tree.Buy(id, 1) })
	got, _ := tree.Lookup(id)
	if (errA == nil) == (errB == nil) || got.Count != 0 {
		k.Fatalf("stock 7 had 1 share; goroutine A called Buy(7, 1) and was stopped right after it first "+
			"unlocked the stock, then B called Buy(7, 1), then A went on.\n  A: %v\n  B: %v\n  count: %d\n"+
			"want exactly one success and a count of 0: check \"enough left?\" and subtract in ONE critical "+
			"section (lock, check, subtract, unlock), never unlock in between", errA, errB, got.Count)
	}

	errA, errB = interleave(k, lock, "Sell(7, 2)", func() error { return tree.Sell(id, 2) },
		func() error { return tree.Sell(id, 3) })
	got, _ = tree.Lookup(id)
	if errA != nil || errB != nil || got.Count != 5 {
		k.Fatalf("stock 7 had 0 shares; A called Sell(7, 2) and was stopped right after it first unlocked the "+
			"stock, then B called Sell(7, 3), then A went on.\n  A: %v\n  B: %v\n  count: %d, want 5: "+
			"read and write the count in one critical section, or an update is lost", errA, errB, got.Count)
	}
}

// interleave runs a in a goroutine until it first unlocks lock, then b to the
// end, then lets a finish, and returns both results.
func interleave(k *testkit.T, lock *pauseLock, what string, a, b func() error) (errA, errB error) {
	k.Helper()
	lock.armed.Store(true)
	done := make(chan error, 1)
	go func() { done <- a() }()
	select {
	case <-lock.paused:
	case err := <-done:
		lock.armed.Store(false)
		treeErr(k, what, err)
		k.Fatalf("%s returned %v without ever unlocking the stock's lock: a trade must change the count "+
			"holding the stock's lock (the one NewTree's newLock made for it)", what, err)
	case <-time.After(testkit.IOTimeout):
		k.Fatalf("%s neither returned nor unlocked the stock's lock within %v", what, testkit.IOTimeout)
	}
	errB = b()
	close(lock.resume)
	errA = <-done
	lock.resume = make(chan struct{})
	return errA, errB
}
