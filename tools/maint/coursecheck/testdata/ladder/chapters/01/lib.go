// Package ladderfix is a starter for the grader's ladder and mutant tests.
// Its 1.4 stub panics instead of failing: the ladder must say so at every
// rung below 4.
package ladderfix

import "errors"

// errTODO is what the stubs return.
var errTODO = errors.New("not implemented")

// Double returns 2n.
func Double(n int) int {
	// TODO(ex 1.1): return twice n.
	return 0
}

// Greet greets name, shouting.
func Greet(name string) (string, error) {
	// TODO(ex 1.2): "HELLO, " and the name in upper case.
	return "", errTODO
}

// Counter counts.
type Counter struct {
	// TODO(ex 1.4): the count.
	seen map[string]int
}

// Add counts one more.
func (c *Counter) Add() int {
	// TODO(ex 1.4): count one more and return the count.
	c.seen["x"]++ // a stub that panics: a nil map
	return 0
}
