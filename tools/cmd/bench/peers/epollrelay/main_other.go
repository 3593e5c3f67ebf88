//go:build !linux

// Command epollrelay needs Linux (the servers it runs and /proc).
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "epollrelay: needs Linux: run it in the dev container or on a Linux machine")
	os.Exit(1)
}
