package jobs

import "testing"

func TestMT19937Seed42(t *testing.T) {
	// First outputs of std::mt19937(42), g++ 12 (docs/protocols.md §2).
	want := []uint32{1608637542, 3421126067, 4083286876, 787846414, 3143890026}
	var m MT19937
	m.Seed(42)
	for i, w := range want {
		if got := m.Uint32(); got != w {
			t.Fatalf("MT19937(42) output %d = %d, want %d", i+1, got, w)
		}
	}
}

// TestMT19937ZeroValue checks the requirement the C++ standard itself states
// for std::mt19937 ([rand.predef]): the 10000th output of a default-constructed
// engine is 4123659995. It also proves the zero MT19937 is seeded with 5489 and
// that the twist is right across 16 refills.
func TestMT19937ZeroValue(t *testing.T) {
	var m MT19937
	var got uint32
	for range 10000 {
		got = m.Uint32()
	}
	if got != 4123659995 {
		t.Errorf("10000th output of the zero MT19937 = %d, want 4123659995", got)
	}
}

func TestMT19937Reseed(t *testing.T) {
	var m MT19937
	m.Seed(42)
	for range 1000 {
		m.Uint32()
	}
	m.Seed(42)
	if got := m.Uint32(); got != 1608637542 {
		t.Errorf("first output after reseeding with 42 = %d, want 1608637542", got)
	}
}

// TestFillInt32MatchesUint32 checks the bulk path SORT uses against the
// one-at-a-time path, for lengths and starting offsets that cross refills.
func TestFillInt32MatchesUint32(t *testing.T) {
	for _, skip := range []int{0, 1, 623, 624, 700} {
		for _, n := range []int{0, 1, 2, 623, 624, 625, 1248, 2000} {
			var one, bulk MT19937
			one.Seed(7)
			bulk.Seed(7)
			for range skip {
				one.Uint32()
				bulk.Uint32()
			}
			got := make([]int32, n)
			bulk.fillInt32(got)
			for i, g := range got {
				if want := int32(one.Uint32()); g != want {
					t.Fatalf("skip %d, fill %d: element %d = %d, want %d", skip, n, i, g, want)
				}
			}
			// Both must continue from the same point.
			if g, w := bulk.Uint32(), one.Uint32(); g != w {
				t.Fatalf("skip %d, fill %d: next output %d, want %d", skip, n, g, w)
			}
		}
	}
}
