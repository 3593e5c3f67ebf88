// Package broken does not compile: the grader must charge a build error to
// every exercise of the chapter, and only to them.
package broken

// Answer is a type error.
func Answer() int { return "forty-two" }
