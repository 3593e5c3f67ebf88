//go:build !unix

// Command c10k is chapter 05's experiment; it raises the fd limit, runs the
// servers as child processes and reads their /proc, so it needs Linux (or at
// least a Unix system).
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "c10k: chapter 05's experiment needs Linux (epoll, /proc, fd limits): "+
		"run it in the dev container (.devcontainer/devcontainer.json) or on a Linux machine")
	os.Exit(1)
}
