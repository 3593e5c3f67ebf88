package main

import "syscall"

// setDeferAccept sets TCP_DEFER_ACCEPT on a listening socket: accept returns
// a connection only once data has arrived on it, or after secs seconds.
func setDeferAccept(fd, secs int) error {
	return syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_DEFER_ACCEPT, secs)
}
