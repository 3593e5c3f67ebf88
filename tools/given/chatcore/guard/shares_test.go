package guard

import (
	"fmt"
	"testing"
)

// TestSharesOneAddressCannotSpendTheCap: one address stops at its share, and
// in the reserve only addresses that made few may make more.
func TestSharesOneAddressCannotSpendTheCap(t *testing.T) {
	s := NewShares(64, 16) // reserve 8, Small 1
	total := 0
	for s.Take("a", total) {
		total++
	}
	if total != 16 {
		t.Fatalf("one address made %d of 64 with a share of 16; want 16", total)
	}
	for i := 0; total < 56; i++ {
		addr := fmt.Sprintf("b%d", i)
		for total < 56 && s.Take(addr, total) {
			total++
		}
	}
	if s.Take("a", total) || s.Take("b0", total) {
		t.Fatalf("at %d of 64 (the reserve), an address that made its share took one more", total)
	}
	if !s.Take("new", total) {
		t.Fatalf("at %d of 64 (the reserve), an address that made none was refused", total)
	}
	if s.Take("new", total+1) {
		t.Fatalf("in the reserve, an address that made Small() (%d) took another", s.Small())
	}
	s.Give("new")
	if !s.Take("new", total) {
		t.Fatalf("after Give, the address was refused its first again")
	}
	if s.Take("other", 64) {
		t.Fatalf("at the cap (64 of 64), a new address took one")
	}
}
