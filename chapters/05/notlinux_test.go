//go:build !linux

package evloop_test

import (
	"fmt"
	"os"
	"testing"
)

// TestMain explains, instead of a silent "no test files", why this chapter
// cannot run here: its event loop is built on epoll, which only Linux has.
func TestMain(m *testing.M) {
	fmt.Fprintln(os.Stderr, "chapter 05 builds an epoll event loop, and epoll exists only on Linux.\n"+
		"Open the course in its dev container (.devcontainer/devcontainer.json: VS Code \"Reopen in Container\"\n"+
		"or GitHub Codespaces), or work on a Linux machine; chapters 01-04 and 06 run here.")
	os.Exit(1)
}
