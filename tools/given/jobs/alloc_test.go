package jobs

import "testing"

// TestSteadyStateAllocs proves the claim of Scratch: after the first job has
// grown the buffers, jobs allocate nothing. (testing.AllocsPerRun runs the
// function once before measuring, which is the warm-up.)
func TestSteadyStateAllocs(t *testing.T) {
	type job struct {
		name string
		run  func()
	}
	var s Scratch
	buf := make([]byte, 0, 64)
	var sink uint64
	jobs := []job{
		{"Scratch.Sort 10000", func() { s.Sort(10000) }},
		{"Scratch.Sort 1", func() { s.Sort(1) }},
		{"Scratch.MatMul 32", func() { s.MatMul(32) }},
		{"Prime", func() { Prime(1000003) }},
		{"Hash", func() { sink += Hash("hello world") }},
		{"HashBytes", func() { sink += HashBytes(buf[:cap(buf)]) }},
		{"AppendPrimeResult", func() { buf = AppendPrimeResult(buf[:0], false) }},
		{"AppendSortResult", func() { buf = AppendSortResult(buf[:0], 10000, -90494) }},
		{"AppendMatMulResult", func() { buf = AppendMatMulResult(buf[:0], 512, 1536) }},
		{"AppendHashResult", func() { buf = AppendHashResult(buf[:0], 13417157620362267345) }},
	}
	if !raceEnabled { // under -race, sync.Pool drops items on purpose
		jobs = append(jobs,
			job{"package Sort 10000", func() { Sort(10000) }},
			job{"package MatMul 32", func() { MatMul(32) }},
		)
	}
	for _, j := range jobs {
		if got := testing.AllocsPerRun(100, j.run); got != 0 {
			t.Errorf("%s: %v allocations per run after warm-up, want 0", j.name, got)
		}
	}
	_ = sink
}
