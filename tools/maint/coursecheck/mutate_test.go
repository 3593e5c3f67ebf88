package main

import (
	"slices"
	"strings"
	"testing"
)

const mutateSrc = `package p

import "sync"

type S struct {
	mu sync.Mutex
	n  int
}

// Add is a student's: every operator applies.
func (s *S) Add(d int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n+d < 10 && d != 0 {
		s.n += d
		return true
	}
	return false
}

// Given is given code: never mutated.
func Given() int { return 1 + 2 }
`

// TestMutateFile checks that every operator the course relies on is made,
// only in the stubbed declaration, with stable keys.
func TestMutateFile(t *testing.T) {
	stubs := map[string][]string{"func (S) Add": {"9.1"}}
	ms, err := mutateFile("p.go", []byte(mutateSrc), stubs)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	keys := map[string]bool{}
	for _, m := range ms {
		got = append(got, m.op+": "+m.before+" → "+m.after)
		if keys[m.key] {
			t.Errorf("key %s given twice", m.key)
		}
		keys[m.key] = true
		if !slices.Equal(m.exercises, []string{"9.1"}) || strings.Contains(m.before, "Given") {
			t.Errorf("%s: exercises %v, line %q: only Add, owned by 9.1, is mutated", m.key, m.exercises, m.before)
		}
	}
	for _, want := range []string{
		"remove: s.mu.Lock() → ",
		"remove: defer s.mu.Unlock() → ",
		"remove: s.n += d → ",
		"remove: return true → ",
		"swap: if s.n+d < 10 && d != 0 { → if s.n+d <= 10 && d != 0 {",
		"swap: if s.n+d < 10 && d != 0 { → if s.n+d < 10 || d != 0 {",
		"swap: if s.n+d < 10 && d != 0 { → if s.n-d < 10 && d != 0 {",
		"swap: if s.n+d < 10 && d != 0 { → if s.n+d < 10 && d == 0 {",
		"const: if s.n+d < 10 && d != 0 { → if s.n+d < 11 && d != 0 {",
		"negate: if s.n+d < 10 && d != 0 { → if !(s.n+d < 10 && d != 0) {",
		"if-true: if s.n+d < 10 && d != 0 { → if true {",
		"if-false: if s.n+d < 10 && d != 0 { → if false {",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("missing mutant %q; made:\n%s", want, strings.Join(got, "\n"))
		}
	}
	again, _ := mutateFile("p.go", []byte(mutateSrc), stubs)
	for i := range again {
		if again[i].key != ms[i].key {
			t.Errorf("keys differ between runs: %s, %s", ms[i].key, again[i].key)
		}
	}
}

// TestNoneCompiledIsNoScore: a run whose graded mutants all failed to compile
// measured nothing (an exercise not committed yet, graded with git HEAD's
// course files), which must not read as 100 %.
func TestNoneCompiledIsNoScore(t *testing.T) {
	r := func(v string) autoResult { return autoResult{verdict: v} }
	for _, tc := range []struct {
		results []autoResult
		want    bool
	}{
		{[]autoResult{r(verdictNotCompiled), r(verdictNotCompiled), r(verdictNotRun)}, true},
		{[]autoResult{r(verdictNotCompiled), r("killed")}, false},
		{[]autoResult{r(verdictNotCompiled), r(verdictSurvived)}, false},
		{[]autoResult{r(verdictNotRun), r(verdictEquivalent)}, false},
		{nil, false},
	} {
		if got := noneCompiled(tc.results); got != tc.want {
			t.Errorf("%v: noneCompiled = %v, want %v", tc.results, got, tc.want)
		}
	}
}
