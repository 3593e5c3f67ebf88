// Package escape is complete; its test leaves a process behind that has left
// the test's process group, to prove that the grader's sweep still finds it.
package escape

// Answer is complete.
func Answer() int { return 42 }
