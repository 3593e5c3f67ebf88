//go:build !linux

package main

// defaultEngine is the http mode's closed-loop engine: goroutines where there
// is no epoll.
const defaultEngine = "goroutine"

// limitSYNs does nothing: TCP_SYNCNT is Linux's; the system's default applies.
func limitSYNs(fd int) error { return nil }
