//go:build !linux

// Command soak runs the course's servers under hostile load; it needs Linux
// (prlimit, /proc).
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "soak: Linux only (it lowers RLIMIT_NOFILE with prlimit and reads /proc)")
	os.Exit(2)
}
