// Package exits ends the process from inside a stub, as a student might to
// skip a check (os.Exit(0)) or as log.Fatal does (os.Exit(1)).
package exits

import "os"

// Zero exits 0 in the middle of the test.
func Zero() int {
	os.Exit(0)
	return 0
}

// Three exits 3 in the middle of the test.
func Three() int {
	os.Exit(3)
	return 0
}

// Honest is complete.
func Honest() int { return 42 }
