//go:build !linux

package main

// setDeferAccept does nothing: TCP_DEFER_ACCEPT is Linux's.
func setDeferAccept(fd, secs int) error { return nil }
