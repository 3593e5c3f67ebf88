// Package fake forges a pass: before any test runs, it prints the lines a
// passing run prints and exits 0. Screening names it (init, os.Exit), at no
// cost; the missing completion record refuses it.
package fake

import (
	"fmt"
	"os"
)

func init() {
	fmt.Println("=== RUN   TestEx4_1_Fake")
	fmt.Println("--- PASS: TestEx4_1_Fake (0.00s)")
	fmt.Println("PASS")
	os.Exit(0)
}

// Answer is an untouched stub.
func Answer() int { return 0 }
