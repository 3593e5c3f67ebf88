//go:build unix

package main

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// raiseFDLimit lifts the soft fd limit to the hard one: 10,000 clients need
// 10,000 descriptors here and 10,000 in the server (Go raises its own at
// start-up).
func raiseFDLimit() {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err == nil && lim.Cur < lim.Max {
		lim.Cur = lim.Max
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
			fmt.Fprintf(os.Stderr, "bench: raising the fd limit: %v\n", err)
		}
	}
}
