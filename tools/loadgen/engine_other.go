//go:build !linux

package main

// defaultEngine is the http mode's closed-loop engine: goroutines where there
// is no epoll.
const defaultEngine = "goroutine"
