package jobs

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

func TestScratchSortVectors(t *testing.T) {
	// Checksums of SORT n computed by g++ 12 with std::mt19937 and std::sort
	// (docs/protocols.md §2). One Scratch runs them all, in an order that makes it
	// shrink and grow again, to show reuse does not leak state between jobs.
	tests := []struct {
		n    int
		want int32
	}{
		{1000, -7404176},
		{1, 0},
		{MaxSort, -4304},
		{2, -1811160619},
		{10000, -90494},
		{1000, -7404176},
	}
	var s Scratch
	for _, tt := range tests {
		if got := s.Sort(tt.n); got != tt.want {
			t.Errorf("SORT %d: checksum %d, want %d", tt.n, got, tt.want)
		}
	}
}

// TestSortInt32 checks the radix sort against slices.Sort on inputs that
// stress it: both sides of the small-input cut-off, negatives and the extreme
// values (the sign-bit flip), duplicates, and inputs where whole passes are
// skipped because every key shares a byte.
func TestSortInt32(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	inputs := map[string][]int32{
		"extremes": {math.MaxInt32, math.MinInt32, 0, -1, 1, math.MinInt32, math.MaxInt32},
	}
	for _, n := range []int{1, 2, radixMin - 1, radixMin, radixMin + 1, 1000, 70_000} {
		random := make([]int32, n)
		small := make([]int32, n)    // only the low byte varies: three passes skipped
		negative := make([]int32, n) // top byte constant, others vary
		equal := make([]int32, n)    // all four passes skipped
		for i := range random {
			random[i] = int32(rng.Uint32())
			small[i] = int32(rng.IntN(256))
			negative[i] = -1 - int32(rng.IntN(1<<24))
			equal[i] = -42
		}
		for name, in := range map[string][]int32{"random": random, "small": small, "negative": negative, "equal": equal} {
			inputs[name+"/"+strconv.Itoa(n)] = in
		}
	}
	for name, in := range inputs {
		want := slices.Sorted(slices.Values(in))
		keys := slices.Clone(in)
		got := sortInt32(keys, make([]int32, len(keys)))
		if !slices.Equal(got, want) {
			i := firstDiff(got, want)
			t.Errorf("%s (n=%d): sorted[%d] = %d, want %d", name, len(in), i, got[i], want[i])
		}
	}
}

func firstDiff(a, b []int32) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return len(a)
}
