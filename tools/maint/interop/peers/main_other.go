//go:build !linux

// Command peers is the course's two-way interop check against the original
// systems. It needs Linux: the originals build and run there, and the chat
// cases run in a private network namespace.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "peers: the interop check runs on Linux only (the originals, network namespaces, /proc); see docs/interop.md")
	os.Exit(2)
}
