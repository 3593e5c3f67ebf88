package jobs

import (
	"math/big"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestReferenceRule checks the oracle on the rule's table in
// docs/protocols.md §2: the original's istream parsing, case by case.
func TestReferenceRule(t *testing.T) {
	type want struct {
		cmd  string
		n    uint64
		text string
		msg  string
	}
	for _, c := range []struct {
		line string
		want want
	}{
		{"PRIME 7", want{cmd: "PRIME", n: 7}},
		{"  PRIME 7", want{cmd: "PRIME", n: 7}},
		{"\tPRIME 7", want{cmd: "PRIME", n: 7}},
		{"\vPRIME 7", want{cmd: "PRIME", n: 7}},
		{"\fPRIME 7", want{cmd: "PRIME", n: 7}},
		{"\rPRIME 7", want{cmd: "PRIME", n: 7}},
		{"PRIME\t7", want{msg: "invalid integer"}},
		{"PRIME  7", want{msg: "invalid integer"}},
		{"PRIME 7 ", want{msg: "invalid integer"}},
		{"PRIME 0007", want{cmd: "PRIME", n: 7}},
		{"PRIME ", want{msg: "missing argument"}},
		{"PRIME", want{msg: "missing argument"}},
		{"PRIME\t", want{msg: "invalid integer"}},
		{"PRIME 0", want{msg: "argument out of range"}},
		{"PRIME 18446744073709551616", want{msg: "argument out of range"}},
		{"PRIME 99999999999999999999x", want{msg: "argument out of range"}},
		{"PRIME 1x", want{msg: "invalid integer"}},
		{"PRIME -5", want{msg: "invalid integer"}},
		{"SORT 2000001", want{msg: "argument out of range"}},
		{"MATMUL 512", want{cmd: "MATMUL", n: 512}},
		{"HASH\thello", want{cmd: "HASH", text: "\thello"}},
		{"HASH  two", want{cmd: "HASH", text: " two"}},
		{"HASH ", want{msg: "missing argument"}},
		{"HASH", want{msg: "missing argument"}},
		{" \t HASH x", want{cmd: "HASH", text: "x"}},
		{"", want{msg: "unsupported command"}},
		{" \t", want{msg: "unsupported command"}},
		{"prime 7", want{msg: "unsupported command"}},
		{"PRIME\v7", want{msg: "invalid integer"}},
		{"HASH\v7", want{cmd: "HASH", text: "\v7"}},
	} {
		cmd, n, text, msg := Reference(c.line)
		assert.Equal(t, c.want, want{cmd, n, text, msg}, "Reference(%q)", c.line)
	}
}

// TestPrimeWithinBudget: the budget decides exactly the numbers it covers,
// and the answers it gives are Prime's.
func TestPrimeWithinBudget(t *testing.T) {
	type answer struct{ isPrime, decided bool }
	for _, c := range []struct {
		n, budget uint64
		want      answer
		why       string
	}{
		{18446744073709551557, MaxPrimeDivisions, answer{false, false}, "the largest prime below 2^64 needs 2^31 divisions"},
		{18446744073709551615, MaxPrimeDivisions, answer{false, true}, "2^64-1 is divisible by 3"},
		{32416190071, MaxPrimeDivisions, answer{true, true}, "the load test's PRIME, ~90 000 divisions"},
		{25, 1, answer{false, false}, "a budget of 1 tries only 3"},
		{25, 2, answer{false, true}, "3 and 5: 5 divides 25"},
		{47, 2, answer{true, true}, "√47 < 7: 3 and 5 are all there is to try"},
		{1, 0, answer{false, true}, "1 is composite"},
		{3, 0, answer{true, true}, "3 needs no division"},
	} {
		isPrime, decided := PrimeWithin(c.n, c.budget)
		assert.Equal(t, c.want, answer{isPrime, decided}, "PrimeWithin(%d, %d): %s", c.n, c.budget, c.why)
	}
}

// FuzzPrimeWithin: whatever the number and the budget, a decided answer is
// the truth (math/big's ProbablyPrime is exact below 2^64), and an undecided
// one only happens when the budget is below the divisors to try.
func FuzzPrimeWithin(f *testing.F) {
	for _, n := range []uint64{0, 1, 2, 3, 4, 25, 49, 32416190071, 18446744073709551557, 1<<53 + 1} {
		f.Add(n, uint16(100))
	}
	f.Fuzz(func(t *testing.T, n uint64, budget uint16) {
		isPrime, decided := PrimeWithin(n, uint64(budget))
		if !decided {
			if (isqrt(n)-1)/2 <= uint64(budget) {
				t.Fatalf("PrimeWithin(%d, %d) gave up within its budget", n, budget)
			}
			return
		}
		if want := new(big.Int).SetUint64(n).ProbablyPrime(0); isPrime != want {
			t.Fatalf("PrimeWithin(%d, %d) = %v, want %v", n, budget, isPrime, want)
		}
	})
}

// FuzzReference: the oracle never panics, and a valid request, written back
// in its canonical form, parses to the same request.
func FuzzReference(f *testing.F) {
	for _, s := range []string{"PRIME 7", "\tHASH\tx", "SORT 2000000", "MATMUL 0", "PRIME 99999999999999999999x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		cmd, n, text, msg := Reference(line)
		if msg != "" {
			if cmd != "" || n != 0 || text != "" {
				t.Fatalf("Reference(%q) = %q, %d, %q with error %q", line, cmd, n, text, msg)
			}
			return
		}
		arg := text
		if cmd != "HASH" {
			arg = strconv.FormatUint(n, 10)
		}
		cmd2, n2, text2, msg2 := Reference(cmd + " " + arg)
		if cmd2 != cmd || n2 != n || text2 != text || msg2 != "" {
			t.Fatalf("Reference(%q) = %q %d %q, but its canonical form %q gives %q %d %q %q",
				line, cmd, n, text, cmd+" "+arg, cmd2, n2, text2, msg2)
		}
	})
}
