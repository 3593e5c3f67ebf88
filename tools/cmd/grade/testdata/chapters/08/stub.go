// Package stub is an untouched starter whose course files the grader's test
// tampers with in a copy: an emptied wiring test, an extra test file, and a
// file added to testkit with an init that forges a pass.
package stub

import "serverlab/tools/given/lab"

// Answer is an untouched stub.
func Answer() (int, error) { return 0, lab.NotImplemented("8.1", "Answer") }
