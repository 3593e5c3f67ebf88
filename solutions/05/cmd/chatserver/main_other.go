//go:build !linux

// Command chatserver is chapter 05's chatserver on an epoll event loop. epoll exists
// only on Linux; elsewhere this program only says so.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "chatserver: chapter 05 runs on epoll, which only Linux has: open the course in its dev\n"+
		"container (.devcontainer/devcontainer.json: VS Code \"Reopen in Container\" or GitHub Codespaces) or use a Linux machine")
	os.Exit(1)
}
