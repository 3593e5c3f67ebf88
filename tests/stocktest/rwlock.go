package stocktest

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"serverlab/tests/testkit"
)

// RWLock checks exercise 4.3: a writer-preferring reader-writer lock that
// blocks instead of spinning. Structurally, with hooks, never with timing:
//
//   - readers share: three readers hold the lock at once;
//   - a waiting writer holds back new readers: once a writer waits, ten
//     readers that arrive must wait too (onWait tells the suite they do);
//   - nobody spins: every goroutine waiting for the lock is parked (asleep
//     in Cond.Wait), as runtime.Stack shows;
//   - writers cannot starve: when the last old reader leaves, the writer gets
//     the lock before any of the ten;
//   - the readers' guarantee: when a writer unlocks, every reader waiting at
//     that moment gets in before a writer that was waiting too;
//   - and, under a random mix of readers and writers, a writer is always alone.
func RWLock(t *testing.T, impl Impl) {
	k := testkit.New(t, "4.3")
	h := newLockHarness(k, impl)
	h.scenario()
	h.checkClean()
	checkBargingWriter(k, impl)
	h.stress()
}

// checkBargingWriter: a writer woken by the last reader's RUnlock must check
// again, when it runs, whether the lock is free: another writer may have
// taken it in between. That is why a condition wait sits in a for loop, never
// in an if. Here the last reader itself calls Lock right after its RUnlock,
// usually before the woken writer has run (the runtime runs a goroutine it
// wakes after the waker yields): with an if, both writers hold the lock. A
// round where the woken writer runs first proves nothing and is repeated.
func checkBargingWriter(k *testkit.T, impl Impl) {
	k.Helper()
	for i := range 20 {
		h := newLockHarness(k, impl)
		b := &actor{name: "writer 2 (the former reader)", writer: true, acquired: make(chan struct{}),
			release: make(chan struct{}), done: make(chan struct{})}
		ready, barge := make(chan struct{}), make(chan struct{})
		var shared atomic.Bool // both writers got in: writer 1's Unlock releases the lock for both
		go func() {
			defer close(b.done)
			h.lock.RLock()
			close(ready)
			<-barge
			h.lock.RUnlock() // wakes writer 1
			h.lock.Lock()    // and, usually, takes the lock before it runs
			h.enter(b.name, true)
			close(b.acquired)
			<-b.release
			h.leave(true)
			if !shared.Load() {
				h.lock.Unlock()
			}
		}()
		k.Cleanup(func() { b.free(); <-b.done })
		<-ready
		w := h.start("writer 1", true)
		h.expectWait(w, "a reader held the lock")
		h.checkAsleep("a reader held the lock and writer 1 waited")
		close(barge)
		select {
		case <-b.acquired:
		case <-w.acquired: // writer 1 ran first: no barging this round
			h.releaseAll(w)
			h.releaseAll(b)
			continue
		case <-time.After(testkit.IOTimeout):
			k.Fatalf("after the only reader's RUnlock, neither the waiting writer nor a new one got the lock "+
				"within %v", testkit.IOTimeout)
		}
		// Writer 1 either gets in too (the bug), or goes back to sleep.
		deadline := time.Now().Add(time.Second)
		for {
			states := actorStates()
			if len(states) == 1 && strings.HasPrefix(states[0], "sync.Cond.Wait") || time.Now().After(deadline) {
				break
			}
			select {
			case <-w.acquired:
			default:
				runtime.Gosched()
				continue
			}
			break
		}
		h.mu.Lock()
		broken := strings.Join(h.broken, "; ")
		h.mu.Unlock()
		if broken != "" {
			shared.Store(true) // unlock once only: a second Unlock of the lock would panic
			h.releaseAll(w, b)
			k.Fatalf("round %d: a reader held the lock and writer 1 waited; the reader called RUnlock (which "+
				"woke writer 1) and then Lock at once, before writer 1 ran. Both writers got the lock: a woken "+
				"writer must check again (for, not if, around Cond.Wait): %s", i+1, broken)
		}
		h.releaseAll(b)
		h.expectOrder("when writer 2 unlocked", w)
		h.releaseAll(w)
		return // one round where writer 2 barged in is the proof
	}
}

// lockHarness runs goroutines ("actors") that take the lock and hold it
// until the suite releases them, and records who holds it.
type lockHarness struct {
	k     *testkit.T
	lock  RWLocker
	waits chan bool   // onWait events
	order chan string // actor names, in the order they got the lock
	quiet atomic.Bool // stop recording onWait events (stress makes too many)

	mu      sync.Mutex // guards the fields below
	readers int
	writers int
	broken  []string // mutual-exclusion violations seen
}

type actor struct {
	name     string
	writer   bool
	acquired chan struct{}
	release  chan struct{}
	done     chan struct{}
}

func newLockHarness(k *testkit.T, impl Impl) *lockHarness {
	h := &lockHarness{k: k, waits: make(chan bool, 1024), order: make(chan string, 1024)}
	h.lock = impl.NewRWLock(func(writer bool) {
		if !h.quiet.Load() {
			h.waits <- writer
		}
	})
	return h
}

// enter and leave record who is inside; a writer must be alone.
func (h *lockHarness) enter(who string, writer bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if writer {
		h.writers++
	} else {
		h.readers++
	}
	if h.writers > 1 || (h.writers == 1 && h.readers > 0) {
		h.broken = append(h.broken, fmt.Sprintf("%s got the lock while %d reader(s) and %d other writer(s) held it",
			who, h.readers-b2i(!writer), h.writers-b2i(writer)))
	}
}

func (h *lockHarness) leave(writer bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if writer {
		h.writers--
	} else {
		h.readers--
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// start runs an actor that takes the lock, records it, and holds it until
// released. The lock is released at cleanup in case the check stops early.
func (h *lockHarness) start(name string, writer bool) *actor {
	a := &actor{name: name, writer: writer, acquired: make(chan struct{}), release: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(a.done)
		if writer {
			h.lock.Lock()
		} else {
			h.lock.RLock()
		}
		h.enter(name, writer)
		h.order <- name
		close(a.acquired)
		<-a.release
		h.leave(writer)
		if writer {
			h.lock.Unlock()
		} else {
			h.lock.RUnlock()
		}
	}()
	h.k.Cleanup(func() {
		a.free()
		select {
		case <-a.done:
		case <-time.After(testkit.IOTimeout): // stuck in the lock; the leak check will say where
		}
	})
	return a
}

func (a *actor) free() {
	select {
	case <-a.release:
	default:
		close(a.release)
	}
}

func kind(writer bool) string {
	if writer {
		return "writer"
	}
	return "reader"
}

// expectAcquire: a starts and must get the lock without waiting.
func (h *lockHarness) expectAcquire(a *actor, state string) {
	h.k.Helper()
	select {
	case <-a.acquired:
		if got := <-h.order; got != a.name {
			h.k.Fatalf("while %s, %s got the lock before %s", state, got, a.name)
		}
	case w := <-h.waits:
		h.k.Fatalf("while %s, %s (a %s) waited (onWait(%v) was called); it should have got the lock at once",
			state, a.name, kind(a.writer), w)
	case <-time.After(testkit.IOTimeout):
		h.k.Fatalf("while %s, %s (a %s) neither got the lock nor called onWait within %v",
			state, a.name, kind(a.writer), testkit.IOTimeout)
	}
}

// expectWait: a starts and must block, calling onWait first.
func (h *lockHarness) expectWait(a *actor, state string) {
	h.k.Helper()
	select {
	case w := <-h.waits:
		if w != a.writer {
			h.k.Fatalf("while %s, %s (a %s) called onWait(writer=%v)", state, a.name, kind(a.writer), w)
		}
	case <-a.acquired:
		h.k.Fatalf("while %s, %s (a %s) got the lock; it must wait%s", state, a.name, kind(a.writer), stubHint)
	case <-time.After(testkit.IOTimeout):
		h.k.Fatalf("while %s, %s (a %s) neither got the lock nor called onWait within %v: a waiting goroutine "+
			"must call onWait once, just before it first waits on the condition variable "+
			"(a lock that spins, or wraps sync.RWMutex, cannot)", state, a.name, kind(a.writer), testkit.IOTimeout)
	}
}

const stubHint = "\n(if RWLock's methods still do nothing, this is exercise 4.3 not implemented yet)"

// expectOrder: the next len(want) acquisitions are exactly those actors, in
// any order.
func (h *lockHarness) expectOrder(state string, want ...*actor) {
	h.k.Helper()
	pending := map[string]bool{}
	var names []string
	for _, a := range want {
		pending[a.name] = true
		names = append(names, a.name)
	}
	for range want {
		select {
		case got := <-h.order:
			if !pending[got] {
				h.k.Fatalf("%s, the lock must go to %s next; %s got it first", state, strings.Join(names, ", "), got)
			}
			delete(pending, got)
		case <-time.After(testkit.IOTimeout):
			h.k.Fatalf("%s, the lock must go to %s next; %v of them did not get it within %v",
				state, strings.Join(names, ", "), len(pending), testkit.IOTimeout)
		}
	}
}

func (h *lockHarness) releaseAll(as ...*actor) {
	for _, a := range as {
		a.free()
		<-a.done
	}
}

// scenario is the structural part of RWLock: see its doc comment.
func (h *lockHarness) scenario() {
	h.k.Helper()
	r := make([]*actor, 3)
	for i := range r {
		r[i] = h.start(fmt.Sprintf("reader %d", i+1), false)
		h.expectAcquire(r[i], fmt.Sprintf("%d reader(s) held the lock", i))
	}
	w1 := h.start("writer 1", true)
	h.expectWait(w1, "3 readers held the lock")
	h.noViolation()

	late := make([]*actor, 10)
	for i := range late {
		late[i] = h.start(fmt.Sprintf("late reader %d", i+1), false)
		h.expectWait(late[i], "readers held the lock and writer 1 waited for it (writer preference)")
	}

	h.checkAsleep("3 readers held the lock and writer 1 and 10 late readers waited")

	h.releaseAll(r[0], r[1])
	h.noViolation()
	h.releaseAll(r[2])
	h.expectOrder("when the last of the first readers left while writer 1 and 10 late readers waited", w1)

	w2 := h.start("writer 2", true)
	h.expectWait(w2, "writer 1 held the lock")
	h.releaseAll(w1)
	h.expectOrder("when writer 1 unlocked while 10 readers and writer 2 waited (the readers' guarantee: "+
		"readers waiting when a writer unlocks all get in before the next writer)", late...)
	h.noViolation()
	h.releaseAll(late...)
	h.expectOrder("when the late readers left", w2)
	h.releaseAll(w2)
	h.noViolation()
}

// checkClean: with nobody holding the lock, a writer gets it at once; a
// reader that comes while the writer holds it waits, even with no other
// writer waiting, and gets it when the writer unlocks; then readers get it at
// once.
func (h *lockHarness) checkClean() {
	h.k.Helper()
	w := h.start("writer 3", true)
	h.expectAcquire(w, "nobody held the lock")
	// A reader waits while a writer holds the lock, even with no writer
	// waiting: a writer is alone.
	r0 := h.start("reader 6", false)
	h.expectWait(r0, "writer 3 held the lock (and no writer waited)")
	h.noViolation()
	h.releaseAll(w)
	h.expectOrder("when writer 3 unlocked while reader 6 waited", r0)
	h.releaseAll(r0)
	r1, r2 := h.start("reader 4", false), h.start("reader 5", false)
	h.expectOrder("nobody held the lock", r1, r2)
	h.releaseAll(r1, r2)
}

// stress runs readers and writers in a random mix; a writer must always be
// alone. The race detector checks the lock's own bookkeeping.
func (h *lockHarness) stress() {
	h.k.Helper()
	h.quiet.Store(true)
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 43))
			for range 300 {
				writer := rng.IntN(4) == 0
				if writer {
					h.lock.Lock()
				} else {
					h.lock.RLock()
				}
				h.enter(fmt.Sprintf("stress goroutine %d (a %s)", g, kind(writer)), writer)
				h.leave(writer)
				if writer {
					h.lock.Unlock()
				} else {
					h.lock.RUnlock()
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(testkit.WatchdogTimeout / 2):
		h.k.Fatalf("6 goroutines taking the lock 300 times each did not finish within %v: a lost wake-up?",
			testkit.WatchdogTimeout/2)
	}
	h.noViolation()
}

func (h *lockHarness) noViolation() {
	h.k.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.broken) > 0 {
		h.k.Fatalf("mutual exclusion broken: %s%s", strings.Join(h.broken, "; "), stubHint)
	}
}

// BenchmarkRWLock compares the chapter's lock with sync.RWMutex on
// goroutines that read (and sometimes write) a small shared value.
func BenchmarkRWLock(b *testing.B, impl Impl) {
	for _, writes := range []int{0, 10, 50} {
		for _, l := range []struct {
			name string
			new  func() RWLocker
		}{
			{"course", func() RWLocker { return impl.NewRWLock(nil) }},
			{"sync.RWMutex", func() RWLocker { return &sync.RWMutex{} }},
		} {
			b.Run(fmt.Sprintf("writes=%d%%/%s", writes, l.name), func(b *testing.B) {
				lock := l.new()
				var shared [8]int
				b.RunParallel(func(pb *testing.PB) {
					i := 0
					for pb.Next() {
						i++
						if i%100 < writes {
							lock.Lock()
							shared[i%8]++
							lock.Unlock()
						} else {
							lock.RLock()
							_ = shared[i%8]
							lock.RUnlock()
						}
					}
				})
			})
		}
	}
}
