package jobs

import (
	"fmt"
	"testing"
)

// TestProtocolVectors checks every result of the test-vector table of
// docs/protocols.md §2 (computed with g++ 12 / libstdc++ on x86-64) through
// the same functions a server calls, formatting included.
func TestProtocolVectors(t *testing.T) {
	tests := []struct {
		request string
		result  func() string
		want    string
	}{
		{"PRIME 1", func() string { return PrimeResult(Prime(1)) }, "composite"},
		{"PRIME 2", func() string { return PrimeResult(Prime(2)) }, "prime"},
		{"PRIME 10000019", func() string { return PrimeResult(Prime(10000019)) }, "prime"},
		{"PRIME 32416190071", func() string { return PrimeResult(Prime(32416190071)) }, "prime"},
		{"SORT 1", func() string { return SortResult(1, Sort(1)) }, "sorted 1 checksum 0"},
		{"SORT 2", func() string { return SortResult(2, Sort(2)) }, "sorted 2 checksum -1811160619"},
		{"SORT 1000", func() string { return SortResult(1000, Sort(1000)) }, "sorted 1000 checksum -7404176"},
		{"SORT 10000", func() string { return SortResult(10000, Sort(10000)) }, "sorted 10000 checksum -90494"},
		{"SORT 2000000", func() string { return SortResult(2000000, Sort(2000000)) }, "sorted 2000000 checksum -4304"},
		{"MATMUL 1", func() string { return MatMulResult(1, MatMul(1)) }, "matmul 1 checksum 3.000000"},
		{"MATMUL 3", func() string { return MatMulResult(3, MatMul(3)) }, "matmul 3 checksum 9.000000"},
		{"MATMUL 64", func() string { return MatMulResult(64, MatMul(64)) }, "matmul 64 checksum 192.000000"},
		{"MATMUL 512", func() string { return MatMulResult(512, MatMul(512)) }, "matmul 512 checksum 1536.000000"},
		{"HASH hello world", func() string { return HashResult(Hash("hello world")) }, "5577293430985752569"},
		{"HASH a", func() string { return HashResult(Hash("a")) }, "4993892634952068459"},
		{"HASH ThreadForge", func() string { return HashResult(Hash("ThreadForge")) }, "2756856608899862579"},
		{"HASH x y  z", func() string { return HashResult(Hash("x y  z")) }, "13417157620362267345"},
	}
	for _, tt := range tests {
		t.Run(tt.request, func(t *testing.T) {
			if got := tt.result(); got != tt.want {
				t.Errorf("request %q: result %q, want %q", tt.request, got, tt.want)
			}
		})
	}
}

func TestLimits(t *testing.T) {
	// The protocol's numbers, restated: a change here is a protocol change.
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"MaxLine", MaxLine, 4096},
		{"MaxSort", MaxSort, 2000000},
		{"MaxMatMul", MaxMatMul, 512},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d (docs/protocols.md §2)", c.name, c.got, c.want)
		}
	}
}

// TestOutOfRangePanics checks that a request the parser should have rejected
// fails loudly instead of computing garbage or indexing out of range.
func TestOutOfRangePanics(t *testing.T) {
	var s Scratch
	cases := []struct {
		name string
		call func()
	}{
		{"SORT 0", func() { s.Sort(0) }},
		{"SORT -1", func() { s.Sort(-1) }},
		{"SORT MaxSort+1", func() { s.Sort(MaxSort + 1) }},
		{"MATMUL 0", func() { s.MatMul(0) }},
		{"MATMUL MaxMatMul+1", func() { s.MatMul(MaxMatMul + 1) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic, want a panic naming the range", c.name)
				}
			}()
			c.call()
		})
	}
}

// TestPackageFuncsConcurrent checks that the pooled package-level Sort and
// MatMul are safe for concurrent use (run it with -race): no two goroutines
// may share a Scratch.
func TestPackageFuncsConcurrent(t *testing.T) {
	const goroutines, rounds = 4, 20
	errs := make(chan string, goroutines*rounds*2)
	done := make(chan struct{})
	for g := range goroutines {
		go func() {
			defer func() { done <- struct{}{} }()
			for r := range rounds {
				n := 1000 + (g+r)%2*9000 // 1000 or 10000, so buffers are resized under contention
				want := map[int]int32{1000: -7404176, 10000: -90494}[n]
				if got := Sort(n); got != want {
					errs <- fmt.Sprintf("SORT %d: checksum %d, want %d", n, got, want)
				}
				m := 8 + (g+r)%3*8
				if got := MatMul(m); got != 3*float64(m) {
					errs <- fmt.Sprintf("MATMUL %d: checksum %v, want %v", m, got, 3*float64(m))
				}
			}
		}()
	}
	for range goroutines {
		<-done
	}
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
