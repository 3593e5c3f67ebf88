package stocktest

import (
	"sync"
	"sync/atomic"
	"time"

	"serverlab/tests/testkit"
)

// holdLock is a stock's lock that can stop the next goroutine to lock it
// inside its critical section, until the suite releases it: a trade then
// holds whatever locks it took on the way (the tree's), and the suite can see
// who waits for them.
type holdLock struct {
	mu      sync.Mutex
	armed   atomic.Bool
	inside  chan struct{}
	release chan struct{}
}

func newHoldLock() *holdLock {
	return &holdLock{inside: make(chan struct{}, 1), release: make(chan struct{})}
}

func (l *holdLock) Lock() {
	l.mu.Lock()
	if l.armed.CompareAndSwap(true, false) {
		l.inside <- struct{}{}
		select {
		case <-l.release:
		case <-time.After(testkit.WatchdogTimeout): // the check failed and forgot us
		}
	}
}

func (l *holdLock) Unlock() { l.mu.Unlock() }

func (l *holdLock) free() {
	select {
	case <-l.release:
	default:
		close(l.release)
	}
}

// lockProbe is the Config of a server whose stocks get holdLocks (in file
// order: market's first stock, 5, gets locks[0]) and whose tree lock reports
// every wait.
type lockProbe struct {
	mu    sync.Mutex
	locks []*holdLock
	waits chan bool
}

func newLockProbe(k *testkit.T, cfg Config) (*lockProbe, Config) {
	p := &lockProbe{waits: make(chan bool, 64)}
	cfg.NewStockLock = func() sync.Locker {
		p.mu.Lock()
		defer p.mu.Unlock()
		l := newHoldLock()
		p.locks = append(p.locks, l)
		return l
	}
	cfg.OnLockWait = func(writer bool) {
		select {
		case p.waits <- writer:
		default:
		}
	}
	return p, cfg
}

// freeAtCleanup releases every held trade when the check ends, before the
// server's Close (cleanups run last-registered first): call it after the
// server is built, or a failing check's Close waits for a trade held forever.
func (p *lockProbe) freeAtCleanup(k *testkit.T) {
	k.Cleanup(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, l := range p.locks {
			l.free()
		}
	})
}

// holdFirst arms the lock of market's first stock (5) and returns it.
func (p *lockProbe) holdFirst(k *testkit.T) *holdLock {
	k.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.locks) != len(parseStocks(k, market)) {
		k.Fatalf("the server made %d stock locks with Config.NewStockLock for a market of %d stocks: load the "+
			"tree with the locks it makes (NewTree(newLock))", len(p.locks), len(parseStocks(k, market)))
	}
	p.locks[0].armed.Store(true)
	return p.locks[0]
}

// holdEach arms the locks of market's first n stocks (in file order) and
// returns them.
func (p *lockProbe) holdEach(k *testkit.T, n int) []*holdLock {
	k.Helper()
	first := p.holdFirst(k)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.locks[1:n] {
		l.armed.Store(true)
	}
	return append([]*holdLock{first}, p.locks[1:n]...)
}

// awaitInside waits until a trade is stopped inside stock 5's lock.
func (l *holdLock) awaitInside(k *testkit.T, what string) {
	k.Helper()
	select {
	case <-l.inside:
	case <-time.After(testkit.IOTimeout):
		k.Fatalf("%s: the trade never locked stock 5's lock (the one Config.NewStockLock made) within %v",
			what, testkit.IOTimeout)
	}
}

// expectWait: the next request waits for the tree lock (onWait is called).
func (p *lockProbe) expectWait(k *testkit.T, writer bool, what, hint string) {
	k.Helper()
	select {
	case w := <-p.waits:
		if w != writer {
			k.Fatalf("%s: it waited for the tree lock as a %s; want a %s\n%s", what, kind(w), kind(writer), hint)
		}
	case <-time.After(testkit.IOTimeout):
		k.Fatalf("%s: it did not wait for the tree's lock as a %s within %v\n%s", what, kind(writer),
			testkit.IOTimeout, hint)
	}
}

// checkTreeLock checks, on the threaded server, what the tree's reader-writer
// lock is for, without timing: a trade is stopped inside its stock's critical
// section, and the lock's onWait hook tells who waits for it.
//
//   - TreeLock: a trade holds the write lock, so a show waits for the read
//     lock (not for the stock's mutex: a show that skips the read lock is not
//     seen waiting), and a trade on another stock waits for the write lock;
//   - StockLocks (the default): a trade on another stock goes through at
//     once: trades hold only the read lock and their own stock's mutex.
func checkTreeLock(k *testkit.T, impl Impl) {
	k.Helper()
	p, cfg := newLockProbe(k, Config{TreeLock: true})
	srv, _, _ := newServer(k, impl, cfg, market)
	p.freeAtCleanup(k)
	m := newModel(parseStocks(k, market))
	a, b, c := k.Dial(srv), k.Dial(srv), k.Dial(srv)
	held := p.holdFirst(k)
	a.WriteLine("buy 5 1")
	held.awaitInside(k, "with TreeLock, a client sent buy 5 1")
	state := "with TreeLock, while a buy of stock 5 held the tree's write lock"
	b.WriteLine("show")
	p.expectWait(k, false, state+", another client sent show",
		"show must take the tree's read lock (RLock): with TreeLock that is what keeps a listing from "+
			"running while a trade is half-way")
	c.WriteLine("sell 3 1")
	p.expectWait(k, true, state+", another client sent sell 3 1",
		"with TreeLock, every trade takes the tree's write lock (Lock), so trades run one at a time")
	held.free()
	expectRecord(k, a, m.apply(mustParse("buy 5 1")))
	expectRecord(k, b, m.apply(mustParse("show"))) // readers waiting when a writer unlocks go first
	expectRecord(k, c, m.apply(mustParse("sell 3 1")))

	p, cfg = newLockProbe(k, Config{})
	srv, _, _ = newServer(k, impl, cfg, market)
	p.freeAtCleanup(k)
	m = newModel(parseStocks(k, market))
	a, c = k.Dial(srv), k.Dial(srv)
	held = p.holdFirst(k)
	a.WriteLine("buy 5 1")
	held.awaitInside(k, "with StockLocks, a client sent buy 5 1")
	c.WriteLine("sell 3 1")
	reply := make(chan string, 1)
	go func() {
		text, err := readRecord(c)
		if err != nil {
			text = err.Error()
		}
		reply <- text
	}()
	select {
	case w := <-p.waits:
		k.Fatalf("with StockLocks (the default), while a buy of stock 5 was inside its stock's lock, sell 3 1 "+
			"waited for the tree's lock (as a %s): with per-stock locks, trades take only the tree's read "+
			"lock, and trades on different stocks never wait for each other (is Config.Granularity used?)", kind(w))
	case got := <-reply:
		if want := m.apply(mustParse("sell 3 1")); got != want {
			k.Fatalf("with StockLocks, while a buy of stock 5 was inside its stock's lock, sell 3 1\n"+
				"  want: %q\n   got: %q%s", want, got, c.Context())
		}
	}
	held.free()
	expectRecord(k, a, m.apply(mustParse("buy 5 1")))
}
