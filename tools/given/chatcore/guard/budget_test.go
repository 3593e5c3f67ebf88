package guard

import (
	"sync"
	"testing"
)

// TestBudgetOptionalHalf: TakeOptional fits only within the first half,
// Take within the whole, and every Give brings Used back.
func TestBudgetOptionalHalf(t *testing.T) {
	b := NewBudget(100)
	if !b.TakeOptional(50) || b.TakeOptional(1) {
		t.Fatalf("TakeOptional(50) then (1) of a budget of 100: want true, false; used %d", b.Used())
	}
	if !b.Spent() {
		t.Fatalf("50 of 100 used: want Spent")
	}
	if !b.Take(50) || b.Take(1) {
		t.Fatalf("Take(50) then (1) with 50 of 100 used: want true, false; used %d", b.Used())
	}
	b.Give(50)
	b.Give(50)
	if b.Used() != 0 || b.Spent() {
		t.Fatalf("after giving everything back: used %d, spent %v; want 0, false", b.Used(), b.Spent())
	}
}

// TestBudgetConcurrent: takes and gives from many goroutines leave the
// budget at 0.
func TestBudgetConcurrent(t *testing.T) {
	const limit, workers, rounds = 1000, 8, 2000
	b := NewBudget(limit)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				n := int64(1 + (w+i)%300)
				take := b.Take
				if i%2 == 0 {
					take = b.TakeOptional
				}
				if take(n) {
					b.Give(n)
				}
			}
		})
	}
	wg.Wait()
	if b.Used() != 0 {
		t.Fatalf("after every take was given back: used %d, want 0", b.Used())
	}
}

// TestReads: n requests at once and no more; a finished one frees its slot;
// none while the output budget's optional half is spent.
func TestReads(t *testing.T) {
	out := NewBudget(100)
	r := NewReads(2, out)
	d1, ok1 := r.Enter()
	d2, ok2 := r.Enter()
	if !ok1 || !ok2 {
		t.Fatal("the first two reads were refused")
	}
	if _, ok := r.Enter(); ok {
		t.Fatal("a third read ran beside two, with a limit of 2")
	}
	d1()
	d3, ok := r.Enter()
	if !ok {
		t.Fatal("a read was refused after one of two ended")
	}
	d2()
	d3()
	if !out.TakeOptional(50) {
		t.Fatal("TakeOptional(50) of 100 refused")
	}
	if _, ok := r.Enter(); ok {
		t.Fatal("a read ran while the output budget's optional half was spent")
	}
}
