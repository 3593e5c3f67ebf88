package main

// The grader's fixture course (tools/cmd/grade/testdata/chapters), graded
// from the module root, serves these checks too; the ladder and the mutant
// runner have their own in testdata/ladder.
const (
	fixtureRoot   = "../../.."
	fixtureTarget = "tools/cmd/grade/testdata/chapters"
)
