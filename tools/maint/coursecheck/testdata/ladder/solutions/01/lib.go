// Package ladderfix is a starter for the grader's ladder and mutant tests.
// Its 1.4 stub panics instead of failing: the ladder must say so at every
// rung below 4.
package ladderfix

import "fmt"

// Double returns 2n.
func Double(n int) int {
	return twice(n)
}

// twice is a helper only the solution has.
func twice(n int) int { return n + n }

// Greet greets name, shouting.
func Greet(name string) (string, error) {
	return fmt.Sprintf("HELLO, %s", shout(name)), nil
}

// Counter counts.
type Counter struct {
	n int
}

// Add counts one more.
func (c *Counter) Add() int {
	c.n++
	return c.n
}
