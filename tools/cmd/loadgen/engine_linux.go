package main

import "syscall"

// defaultEngine is the http mode's closed-loop engine: the event loops where
// there is epoll.
const defaultEngine = "epoll"

// limitSYNs makes the kernel give up an unanswered connect after two SYN
// retransmissions (about 7 s) instead of six.
func limitSYNs(fd int) error {
	return syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_SYNCNT, 2)
}
